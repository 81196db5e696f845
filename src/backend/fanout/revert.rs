//! Taking back chosen drifted fields: re-apply the desired objects with force, but with every
//! drifted field that was *not* chosen set to its live value first, so only the chosen fields
//! change (and change owner back to flotilla). The adjusted objects go through [`apply`], the
//! path `flotilla apply` takes, so a revert has apply's guards, ordering and rows. Shared by
//! `flotilla repair --revert` and the console's drift view. It must not decide which fields to
//! take back, and never deletes.
//!
//! [`apply`]: super::apply

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::apply::{ApplyItem, apply_with};
use super::cluster_api::ClusterApi;
use super::object::resource_of;
use super::targets::{Ignores, Options, Target};
use crate::engine::compare::diff;
use crate::engine::edit::adopt;
use crate::model::ResourceRef;

/// A chosen field: cluster name, object and the field's JSON pointer as drift reported it.
pub type Chosen = (String, ResourceRef, String);

/// Re-applies, with force, the objects of `targets` that have a chosen field on their cluster,
/// each adjusted so that only the chosen fields move. Objects without a chosen field are left
/// out. Returns one item per object applied (or failed).
pub async fn revert_fields<A: ClusterApi>(
    targets: Vec<Target<A>>,
    chosen: &BTreeSet<Chosen>,
    ignores: &Ignores,
    options: Options,
) -> Vec<ApplyItem> {
    let mut work: Vec<Target<A>> = Vec::new();
    for target in targets {
        let objects: Vec<Value> = target
            .objects
            .iter()
            .filter(|o| {
                let r = resource_of(o);
                chosen
                    .iter()
                    .any(|(cluster, resource, _)| *cluster == target.cluster && *resource == r)
            })
            .cloned()
            .collect();
        if objects.is_empty() {
            continue;
        }
        let mut adjusted = Vec::new();
        for object in objects {
            let resource = resource_of(&object);
            let live = match &target.api {
                Ok(api) => api.get(&resource).await.ok().flatten(),
                Err(_) => None,
            };
            let mut intent = object.clone();
            if let Some(live) = &live {
                for field in diff::drifted_fields(&object, live) {
                    let key = (target.cluster.clone(), resource.clone(), field.pointer());
                    if chosen.contains(&key) {
                        continue;
                    }
                    let Some(at) = adopt::desired_pointer(&object, &field.path) else {
                        continue;
                    };
                    match &field.live {
                        Some(value) => {
                            if let Some(slot) = intent.pointer_mut(&at) {
                                *slot = value.clone();
                            }
                        }
                        // Absent on the cluster and not chosen: do not put it back.
                        None => remove_pointer(&mut intent, &at),
                    }
                }
            }
            adjusted.push(intent);
        }
        work.push(Target {
            objects: adjusted,
            failed: Vec::new(),
            prune_kinds: Vec::new(),
            ..target
        });
    }
    if work.is_empty() {
        return Vec::new();
    }
    apply_with(&work, true, &BTreeMap::new(), options, ignores, &|_, _| {}).await
}

/// Removes the field or list item at `pointer`, if there is one.
pub fn remove_pointer(object: &mut Value, pointer: &str) {
    let Some((parent, last)) = jsonptr::Pointer::parse(pointer)
        .ok()
        .and_then(jsonptr::Pointer::split_back)
    else {
        return;
    };
    let last = last.decoded().into_owned();
    match object.pointer_mut(parent.as_str()) {
        Some(Value::Object(map)) => {
            map.remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}
