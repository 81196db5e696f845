//! Karmada's `Retain`: the desired object a member is compared with and updated to, with
//! what the member owns kept from the object it has (`ObjectWatcher.Update` runs it before
//! every update). A kind's `Retain` script decides when a customization gives one;
//! otherwise Karmada's built-in retention for the kind
//! (`pkg/resourceinterpreter/default/native/retain.go` and `pkg/util/lifted/retain.go`):
//! a Deployment labelled `resourcetemplate.karmada.io/retain-replicas: "true"` keeps the
//! member's replicas, a Pod its node, service account, volumes and volume mounts, a Service
//! its cluster IP and health-check node port, a ServiceAccount its secrets, a PVC its volume, a
//! PV its claim, a Job its generated selector and template labels, a service-account token
//! Secret its data. It computes objects only: it must not read a cluster or decide drift.

use serde_json::{Map, Value};

use super::{InterpreterError, Interpreters, Operation, vm};
use crate::engine::health::lua::Limits;

/// The label that asks Karmada to keep a Deployment's replicas as the member has them.
pub const RETAIN_REPLICAS_LABEL: &str = "resourcetemplate.karmada.io/retain-replicas";

impl Interpreters {
    /// Whether `desired` may come out of its retention changed, so the member's object must
    /// be read before it is applied: always under a `Retain` script; under a built-in, only
    /// when `desired` sets a field it keeps. flotilla applies server-side, so a field the
    /// intent leaves out is the member's already (Karmada, which replaces the whole object,
    /// has to copy it back).
    pub fn retains(&self, desired: &Value) -> bool {
        let text = |field: &str| desired.get(field).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if self.script(api_version, kind, Operation::Retain).is_some() {
            return true;
        }
        let sets = |pointer: &str| desired.pointer(pointer).is_some_and(|v| !v.is_null());
        match (api_version, kind) {
            ("apps/v1", "Deployment") => {
                desired
                    .pointer("/metadata/labels")
                    .and_then(|labels| labels.get(RETAIN_REPLICAS_LABEL))
                    .and_then(Value::as_str)
                    == Some("true")
            }
            ("v1", "Pod") => {
                [
                    "/spec/nodeName",
                    "/spec/serviceAccountName",
                    "/spec/volumes",
                ]
                .into_iter()
                .any(sets)
                    || ["containers", "initContainers"].into_iter().any(|list| {
                        desired
                            .pointer(&format!("/spec/{list}"))
                            .and_then(Value::as_array)
                            .is_some_and(|cs| cs.iter().any(|c| c.get("volumeMounts").is_some()))
                    })
            }
            ("v1", "Service") => sets("/spec/clusterIP") || sets("/spec/healthCheckNodePort"),
            ("v1", "ServiceAccount") => sets("/secrets") || sets("/imagePullSecrets"),
            ("v1", "PersistentVolumeClaim") => sets("/spec/volumeName"),
            ("v1", "PersistentVolume") => sets("/spec/claimRef"),
            ("batch/v1", "Job") => {
                sets("/spec/selector/matchLabels") || sets("/spec/template/metadata/labels")
            }
            ("v1", "Secret") => text("type") == "kubernetes.io/service-account-token",
            _ => false,
        }
    }

    /// `desired` with what `observed` (the member's object) keeps: the kind's `Retain` script
    /// when a customization gives one, else Karmada's built-in retention; `desired` unchanged
    /// for a kind with neither. A failing script is an error naming it: Karmada then does not
    /// update the object.
    pub fn retain(&self, desired: &Value, observed: &Value) -> Result<Value, InterpreterError> {
        let text = |field: &str| desired.get(field).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        match self.script(api_version, kind, Operation::Retain) {
            Some(script) => vm::retain(
                &script.origin,
                &script.text,
                desired,
                observed,
                Limits::default(),
            )
            .map_err(|error| InterpreterError {
                origin: format!("Retain ({})", script.origin),
                error,
            }),
            None => Ok(builtin(api_version, kind, desired, observed)),
        }
    }
}

/// Karmada's built-in retention of `kind` (`desired` unchanged for a kind it has none for).
pub fn builtin(api_version: &str, kind: &str, desired: &Value, observed: &Value) -> Value {
    let mut out = desired.clone();
    let from = |pointer: &str| observed.pointer(pointer).filter(|v| !v.is_null());
    match (api_version, kind) {
        ("apps/v1", "Deployment") => {
            let asked = desired
                .pointer("/metadata/labels")
                .and_then(|labels| labels.get(RETAIN_REPLICAS_LABEL))
                .and_then(Value::as_str)
                == Some("true");
            if let (true, Some(replicas)) = (asked, from("/spec/replicas")) {
                set(&mut out, &["spec", "replicas"], replicas.clone());
            }
        }
        ("v1", "Pod") => {
            for field in ["nodeName", "serviceAccountName", "volumes"] {
                match from(&format!("/spec/{field}")) {
                    Some(value) => set(&mut out, &["spec", field], value.clone()),
                    None => remove(&mut out, &["spec", field]),
                }
            }
            for list in ["containers", "initContainers"] {
                retain_volume_mounts(&mut out, observed, list);
            }
        }
        ("v1", "Service") => {
            if let Some(port) = from("/spec/healthCheckNodePort").filter(|p| p.as_i64() > Some(0)) {
                set(&mut out, &["spec", "healthCheckNodePort"], port.clone());
            }
            if let Some(ip) = from("/spec/clusterIP").filter(|ip| ip.as_str() != Some("")) {
                set(&mut out, &["spec", "clusterIP"], ip.clone());
            }
        }
        ("v1", "ServiceAccount") => {
            for field in ["secrets", "imagePullSecrets"] {
                merge_secrets(&mut out, observed, field);
            }
        }
        ("v1", "PersistentVolumeClaim") => {
            if let Some(volume) = from("/spec/volumeName").filter(|v| v.as_str() != Some("")) {
                set(&mut out, &["spec", "volumeName"], volume.clone());
            }
        }
        ("v1", "PersistentVolume") => {
            if let Some(claim) = from("/spec/claimRef") {
                set(&mut out, &["spec", "claimRef"], claim.clone());
            }
        }
        ("batch/v1", "Job") => {
            if let Some(labels) = from("/spec/selector/matchLabels") {
                set(
                    &mut out,
                    &["spec", "selector", "matchLabels"],
                    labels.clone(),
                );
            }
            if let Some(labels) = from("/spec/template/metadata/labels") {
                set(
                    &mut out,
                    &["spec", "template", "metadata", "labels"],
                    labels.clone(),
                );
            }
        }
        ("v1", "Secret") => {
            let token = desired.get("type").and_then(Value::as_str)
                == Some("kubernetes.io/service-account-token");
            if let (true, Some(data)) = (token, from("/data")) {
                set(&mut out, &["data"], data.clone());
            }
        }
        _ => {}
    }
    out
}

/// Each desired container (by name) takes the volume mounts of the member's container of
/// that name.
fn retain_volume_mounts(out: &mut Value, observed: &Value, list: &str) {
    let Some(observed) = observed
        .pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
    else {
        return;
    };
    let Some(desired) = out
        .pointer_mut(&format!("/spec/{list}"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for theirs in observed {
        let name = theirs.get("name");
        if let Some(ours) = desired
            .iter_mut()
            .find(|c| c.get("name") == name)
            .and_then(Value::as_object_mut)
        {
            match theirs.get("volumeMounts").filter(|v| !v.is_null()) {
                Some(mounts) => {
                    ours.insert("volumeMounts".into(), mounts.clone());
                }
                None => {
                    ours.remove("volumeMounts");
                }
            }
        }
    }
}

/// The desired references of `field` (`secrets`, `imagePullSecrets`), then the member's that
/// name another secret.
fn merge_secrets(out: &mut Value, observed: &Value, field: &str) {
    let ours: Vec<Value> = out
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let theirs: Vec<Value> = observed
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut merged: Vec<Value> = Vec::new();
    for secret in ours.into_iter().chain(theirs) {
        let name = secret.get("name").cloned();
        if !merged.iter().any(|m| m.get("name").cloned() == name) {
            merged.push(secret);
        }
    }
    if merged.is_empty() {
        remove(out, &[field]);
    } else {
        set(out, &[field], Value::Array(merged));
    }
}

fn set(root: &mut Value, path: &[&str], value: Value) {
    let mut node = root;
    for (i, key) in path.iter().enumerate() {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Some(fields) = node.as_object_mut() else {
            return;
        };
        if i + 1 == path.len() {
            fields.insert((*key).to_string(), value);
            return;
        }
        node = fields
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn remove(root: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = root;
    for key in parents {
        match node.get_mut(*key) {
            Some(next) => node = next,
            None => return,
        }
    }
    if let Some(fields) = node.as_object_mut() {
        fields.remove(*last);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::interpreter::customization::{Customization, Script};
    use serde_json::json;

    #[test]
    fn a_deployment_keeps_the_members_replicas_only_when_its_label_asks() {
        let observed = json!({"spec": {"replicas": 7}});
        let plain = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2}});
        assert_eq!(
            builtin("apps/v1", "Deployment", &plain, &observed),
            plain,
            "no label: the template's replicas"
        );
        let labelled = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"labels": {RETAIN_REPLICAS_LABEL: "true"}}, "spec": {"replicas": 2}});
        let kept = builtin("apps/v1", "Deployment", &labelled, &observed);
        assert_eq!(kept.pointer("/spec/replicas"), Some(&json!(7)));
    }

    #[test]
    fn only_an_intent_that_sets_a_retained_field_needs_the_members_object() {
        let none = Interpreters::default();
        let plain = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2}});
        assert!(
            !none.retains(&plain),
            "server-side apply leaves the rest to the member"
        );
        let labelled = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"labels": {RETAIN_REPLICAS_LABEL: "true"}}, "spec": {"replicas": 2}});
        assert!(none.retains(&labelled));
        let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": []}});
        assert!(!none.retains(&service));
        let pinned = json!({"apiVersion": "v1", "kind": "Service", "spec": {"clusterIP": "None"}});
        assert!(none.retains(&pinned));
    }

    #[test]
    fn a_service_account_keeps_the_secrets_the_member_added_after_its_own() {
        let desired = json!({"secrets": [{"name": "a"}]});
        let observed = json!({"secrets": [{"name": "token-x"}, {"name": "a"}]});
        let kept = builtin("v1", "ServiceAccount", &desired, &observed);
        assert_eq!(
            kept,
            json!({"secrets": [{"name": "a"}, {"name": "token-x"}]})
        );
    }

    #[test]
    fn a_retain_script_decides_over_the_built_in_and_names_itself_when_it_fails() {
        let script = |text: &str| Customization {
            name: "svc".into(),
            api_version: "v1".into(),
            kind: "Service".into(),
            scripts: [(
                Operation::Retain,
                Script {
                    text: text.into(),
                    origin: "fleet.yaml:9".into(),
                },
            )]
            .into(),
            location: "fleet.yaml:1".into(),
        };
        let desired = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "A"}});
        let observed = json!({"spec": {"type": "B", "clusterIP": "10.0.0.1"}});
        let keep_type = Interpreters::new(&[script(
            "function Retain(d, o) d.spec.type = o.spec.type return d end",
        )]);
        assert_eq!(
            keep_type.retain(&desired, &observed).unwrap(),
            json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "B"}}),
            "the script, not the built-in that keeps the cluster IP"
        );
        let broken = Interpreters::new(&[script("function Retain(d, o) return nil end")]);
        let error = broken.retain(&desired, &observed).unwrap_err();
        assert!(error.to_string().contains("fleet.yaml:9"), "{error}");
        let none = Interpreters::default();
        assert_eq!(
            none.retain(&desired, &observed).unwrap(),
            json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "A", "clusterIP": "10.0.0.1"}})
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fleet_tests {
    use crate::engine::{SourceFile, load_fleet};
    use serde_json::json;

    #[test]
    fn a_fleets_retain_script_keeps_the_members_field() {
        let text = "\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: widget}
spec:
  target: {apiVersion: x.example.io/v1, kind: Widget}
  customizations:
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          desiredObj.spec.paused = observedObj.spec.paused
          return desiredObj
        end
";
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "fleet.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let desired = json!({"apiVersion": "x.example.io/v1", "kind": "Widget",
            "metadata": {"name": "dial"}, "spec": {"size": 3, "paused": false}});
        let observed = json!({"spec": {"size": 5, "paused": true}});
        let kept = fleet.interpreters.retain(&desired, &observed).unwrap();
        assert_eq!(
            kept.pointer("/spec"),
            Some(&json!({"size": 3, "paused": true}))
        );
    }
}
