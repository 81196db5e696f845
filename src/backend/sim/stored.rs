//! The objects a simulated cluster stores: the rendered desired object with the cell's drift in
//! it, the drift's manager in its managedFields and the status its controllers report, as a
//! real API server would hand it back. Shared by the simulated cluster API and the console's
//! object view of the demo. It must not decide what is applied or what a cell's status is.

use serde_json::{Map, Value, json};

use super::world::{SimCore, SimDrift};
use crate::backend::fanout::object::FIELD_MANAGER;
use crate::engine::Decision;
use crate::engine::compare::diff::{self, Segment};
use crate::engine::compare::secrets;

/// The object a simulated cluster holds for a fleet row, as it stores it (drift, managed
/// fields and the status its controllers report), if it holds one.
pub fn held_object(core: &SimCore, row: usize, cluster: usize) -> Option<Value> {
    let drift = core.held(row, cluster)?;
    match core.fleet().decide(row, cluster) {
        Decision::Placed { object, .. } => {
            let mut stored = as_stored(&object, drift);
            core.report_status(row, cluster, &mut stored);
            let key = core.fleet().resources[row].target.display_key();
            let uid = uid(&[&core.fleet().clusters[cluster].name, &key]);
            if let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("uid".into(), Value::String(uid));
            }
            Some(stored)
        }
        Decision::Suspended { .. } | Decision::NotPlaced { .. } => None,
    }
}

/// An object as the cluster stores it: `stringData` folded into `data`, the drifted field at
/// its live value and owned by the manager that changed it, everything else by flotilla.
pub fn as_stored(applied: &Value, drift: Option<&SimDrift>) -> Value {
    let mut stored = applied.clone();
    secrets::fold_string_data(&mut stored);
    let mut managed = vec![json!({"manager": FIELD_MANAGER, "operation": "Apply"})];
    if let Some(drift) = drift
        && let Some(slot) = stored.pointer_mut(&drift.path)
    {
        *slot = drift.live.clone();
        let owned: Vec<Vec<Segment>> = diff::drifted_fields(applied, &stored)
            .into_iter()
            .map(|field| field.path)
            .collect();
        managed.push(json!({
            "manager": drift.manager,
            "operation": "Update",
            "fieldsV1": fields_v1(&owned),
        }));
    }
    if let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("managedFields".into(), Value::Array(managed));
    }
    stored
}

/// The FieldsV1 set of managedFields that owns exactly these paths.
fn fields_v1(paths: &[Vec<Segment>]) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for segment in path {
            let key = match segment {
                Segment::Field(name) => format!("f:{name}"),
                Segment::Keyed { key, .. } => format!("k:{}", Value::Object(key.clone())),
            };
            let child = node.entry(key).or_insert_with(|| json!({}));
            let Some(map) = child.as_object_mut() else {
                break;
            };
            node = map;
        }
    }
    Value::Object(root)
}

/// A stable uid for a simulated object, from what names it.
pub fn uid(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.join("/").bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let hex = format!(
        "{hash:016x}{:016x}",
        hash.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15
    );
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
