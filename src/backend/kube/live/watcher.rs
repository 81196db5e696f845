//! What the live backend learns of a cluster's objects without polling: which of the fleet's
//! kinds the cluster serves (aggregated discovery, or the classic walk of the groups), and a
//! watch per served kind of the objects carrying flotilla's ownership label, resuming from the
//! last resourceVersion. It only reads; it must not decide cell statuses (the cluster's
//! column does).

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::Value;
use std::collections::BTreeSet;

use super::column::WatchChange;
use crate::backend::kube::probe::short_error;
use crate::engine::{MANAGED_BY_LABEL, MANAGED_BY_VALUE};

/// Seconds after which the server ends a quiet watch; the watcher resumes from the last
/// resourceVersion, so this costs one request, not a relist.
const WATCH_TIMEOUT_SECS: u32 = 45;

/// The API resource of each kind, or `None` when the cluster does not serve it. Aggregated
/// discovery costs two requests; servers without it get the classic walk of the groups.
pub(super) async fn discover(
    client: &Client,
    kinds: &[(String, String)],
) -> Result<Vec<Option<ApiResource>>, String> {
    let groups: BTreeSet<String> = kinds
        .iter()
        .map(|(api_version, _)| group_of(api_version).to_string())
        .collect();
    let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
    let discovery = match Discovery::new(client.clone())
        .filter(&groups)
        .run_aggregated()
        .await
    {
        Ok(discovery) => discovery,
        Err(_) => Discovery::new(client.clone())
            .filter(&groups)
            .run()
            .await
            .map_err(|err| short_error(&err))?,
    };
    Ok(kinds
        .iter()
        .map(|(api_version, kind)| {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            discovery
                .resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
                .map(|(resource, _)| resource)
        })
        .collect())
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Watches every object of one kind that carries flotilla's ownership label, reconnecting with
/// backoff, and hands each change (or watch error) to `heard` until it returns false.
pub(super) async fn watch_kind(
    client: Client,
    resource: ApiResource,
    heard: impl Fn(Result<WatchChange, String>) -> bool,
) {
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let config = watcher::Config::default()
        .labels(&format!("{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}"))
        .timeout(WATCH_TIMEOUT_SECS);
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        let change = match event {
            Ok(Event::Init) => Ok(WatchChange::ListStarted),
            Ok(Event::InitApply(object)) => Ok(WatchChange::Listed(to_value(object, &resource))),
            Ok(Event::InitDone) => Ok(WatchChange::ListDone),
            Ok(Event::Apply(object)) => Ok(WatchChange::Applied(to_value(object, &resource))),
            Ok(Event::Delete(object)) => Ok(WatchChange::Deleted(to_value(object, &resource))),
            Err(err) => Err(short_error(&err)),
        };
        if !heard(change) {
            return;
        }
    }
}

/// A watched object as plain JSON, with the apiVersion and kind a list item may omit.
fn to_value(object: DynamicObject, resource: &ApiResource) -> Value {
    let name = object.name_any();
    let mut value = serde_json::to_value(object).unwrap_or_else(|err| {
        tracing::warn!("cannot read watched object {name}: {err}");
        Value::Null
    });
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            Value::String(resource.api_version.clone()),
        );
        map.insert("kind".into(), Value::String(resource.kind.clone()));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_their_api_group() {
        assert_eq!(group_of("v1"), "");
        assert_eq!(group_of("apps/v1"), "apps");
        assert_eq!(group_of("example.com/v1alpha1"), "example.com");
    }
}
