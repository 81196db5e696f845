//! What each replica of a workload asks of a cluster, as Karmada works it out and keeps it in
//! a binding: a pod template's requirements as `helper.GenerateReplicaRequirements` reads them
//! (the node claim: node selector, tolerations, hard node affinity; the resource request: each
//! container's requests, a limit standing in for a missing request, summed; an init
//! container's taken where it asks more; the pod overhead added), and the requirements and
//! components a script returns read as Go reads them into Karmada's typed
//! `ReplicaRequirements` and `Component`s (unknown fields dropped, quantities parsed, a wrong
//! type an error). It reads JSON and answers; it must not run scripts nor decide placement.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::quantity::{Format, Quantity};
use crate::engine::document::api_rules::is_qualified_name;

/// Karmada's `ReplicaRequirements` (and, without a namespace, a component's
/// `ComponentReplicaRequirements`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Requirements {
    /// The typed `NodeClaim`, as Go writes it (empty fields left out); `None` without one.
    pub node_claim: Option<Value>,
    /// Per resource name, what one replica asks (compared by value).
    pub resource_request: BTreeMap<String, Quantity>,
    pub namespace: String,
    pub priority_class_name: String,
}

impl Requirements {
    /// As Go's JSON writes it: empty fields left out, quantities in their text.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        if let Some(claim) = &self.node_claim {
            out.insert("nodeClaim".into(), claim.clone());
        }
        if !self.resource_request.is_empty() {
            let request: Map<String, Value> = self
                .resource_request
                .iter()
                .map(|(name, quantity)| (name.clone(), Value::String(quantity.text())))
                .collect();
            out.insert("resourceRequest".into(), Value::Object(request));
        }
        if !self.namespace.is_empty() {
            out.insert("namespace".into(), Value::String(self.namespace.clone()));
        }
        if !self.priority_class_name.is_empty() {
            out.insert(
                "priorityClassName".into(),
                Value::String(self.priority_class_name.clone()),
            );
        }
        Value::Object(out)
    }

    /// The request in words, `cpu 500m, memory 256Mi` (empty: none).
    pub fn request_text(&self) -> String {
        self.resource_request
            .iter()
            .map(|(name, quantity)| format!("{name} {}", quantity.text()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One component of a multi-component workload (Karmada's `Component`).
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub name: String,
    pub replicas: i32,
    pub requirements: Option<Requirements>,
}

impl Component {
    /// As Go's JSON writes it.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), Value::String(self.name.clone()));
        out.insert("replicas".into(), Value::from(self.replicas));
        if let Some(requirements) = &self.requirements {
            out.insert("replicaRequirements".into(), requirements.to_json());
        }
        Value::Object(out)
    }
}

/// `helper.GenerateReplicaRequirements` of a pod template (`metadata` and `spec`), already
/// read from Lua with its empty tables dropped: `None` when it claims no node and asks for no
/// resource; an error where Go could not read the template as a `PodTemplateSpec`.
pub fn of_pod_template(template: &Value) -> Result<Option<Requirements>, String> {
    let spec = match template.get("spec") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(spec @ Value::Object(_)) => spec.clone(),
        Some(other) => return Err(mismatch("spec", "PodSpec", other)),
    };
    let node_claim = node_claim_of_pod(&spec)?;
    let resource_request = pod_request(&spec)?;
    if node_claim.is_none() && resource_request.is_empty() {
        return Ok(None);
    }
    Ok(Some(Requirements {
        node_claim,
        resource_request,
        ..Requirements::default()
    }))
}

/// `GenerateNodeClaimByPodSpec`: the pod's node selector, tolerations and required node
/// affinity, `None` when it has none of them.
fn node_claim_of_pod(spec: &Value) -> Result<Option<Value>, String> {
    let mut claim = Map::new();
    let selector = match spec.get("nodeSelector") {
        None | Some(Value::Null) => None,
        Some(selector) => Some(string_map(selector, "nodeSelector")?),
    };
    let tolerations = match spec.get("tolerations") {
        None | Some(Value::Null) => Vec::new(),
        Some(list) => tolerations_of(list)?,
    };
    let affinity = match spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
    {
        None | Some(Value::Null) => None,
        Some(required) => Some(node_selector(required)?),
    };
    if let Some(affinity) = affinity {
        claim.insert("hardNodeAffinity".into(), affinity);
    }
    let has_selector = selector.is_some();
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        claim.insert("nodeSelector".into(), Value::Object(selector));
    }
    let has_tolerations = !tolerations.is_empty();
    if has_tolerations {
        claim.insert("tolerations".into(), Value::Array(tolerations));
    }
    if !has_selector && !has_tolerations && !claim.contains_key("hardNodeAffinity") {
        return Ok(None);
    }
    Ok(Some(Value::Object(claim)))
}

/// What one replica asks (`Resource.AddPodTemplateRequest(...).ResourceList()`).
fn pod_request(spec: &Value) -> Result<BTreeMap<String, Quantity>, String> {
    let mut total = Resource::default();
    for container in containers(spec, "containers")? {
        total.add(&requests_of(container)?);
    }
    for container in containers(spec, "initContainers")? {
        total.set_max(&requests_of(container)?);
    }
    match spec.get("overhead") {
        None | Some(Value::Null) => {}
        Some(overhead) => total.add(&resource_list(overhead, "overhead")?),
    }
    Ok(total.resource_list())
}

fn containers<'a>(spec: &'a Value, field: &str) -> Result<Vec<&'a Value>, String> {
    match spec.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Object(_) | Value::Null => Ok(item),
                other => Err(mismatch(field, "Container", other)),
            })
            .collect(),
        Some(other) => Err(mismatch(field, "[]Container", other)),
    }
}

/// A container's requests, each limit without a request standing in for it.
fn requests_of(container: &Value) -> Result<Vec<(String, Quantity)>, String> {
    let read = |field: &str| match container.pointer(&format!("/resources/{field}")) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(list) => resource_list(list, field),
    };
    let mut requests = read("requests")?;
    for (name, limit) in read("limits")? {
        if !requests.iter().any(|(have, _)| *have == name) {
            requests.push((name, limit));
        }
    }
    Ok(requests)
}

/// A `ResourceList` as Go reads one from JSON.
fn resource_list(list: &Value, field: &str) -> Result<Vec<(String, Quantity)>, String> {
    let Value::Object(entries) = list else {
        return Err(mismatch(field, "ResourceList", list));
    };
    entries
        .iter()
        .map(|(name, value)| Ok((name.clone(), quantity_of(value)?)))
        .collect()
}

/// A quantity as `Quantity.UnmarshalJSON` reads a JSON value: `null` is zero, a string or a
/// number is parsed from its text.
pub fn quantity_of(value: &Value) -> Result<Quantity, String> {
    let text = match value {
        Value::Null => return Ok(Quantity::zero()),
        Value::String(text) => text.trim().to_string(),
        Value::Number(number) => go_number_text(number),
        other => other.to_string(),
    };
    Quantity::parse(&text).map_err(|error| error.to_string())
}

/// A number as Go's JSON writes a float64 (the form Karmada's Lua numbers reach a quantity
/// in): plain digits, or an exponent below 1e-6 and from 1e21.
fn go_number_text(number: &serde_json::Number) -> String {
    if number.is_i64() || number.is_u64() {
        return number.to_string();
    }
    let value = number.as_f64().unwrap_or(0.0);
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// Karmada's `util.Resource`: whole or milli units per resource, in Go's 64-bit arithmetic.
#[derive(Default)]
struct Resource {
    milli_cpu: i64,
    memory: i64,
    ephemeral_storage: i64,
    pods: i64,
    scalars: BTreeMap<String, i64>,
}

impl Resource {
    /// The counter a resource name adds to, and its amount in the counter's unit (milli for
    /// CPU, whole units else); `None` for a name Kubernetes does not count.
    fn slot(&mut self, name: &str, quantity: &Quantity) -> Option<(&mut i64, i64)> {
        Some(match name {
            "cpu" => (&mut self.milli_cpu, quantity.milli_value()),
            "memory" => (&mut self.memory, quantity.value()),
            "pods" => (&mut self.pods, quantity.value()),
            "ephemeral-storage" => (&mut self.ephemeral_storage, quantity.value()),
            _ if is_scalar_resource(name) => (
                self.scalars.entry(name.to_string()).or_insert(0),
                quantity.value(),
            ),
            _ => return None,
        })
    }

    fn add(&mut self, list: &[(String, Quantity)]) {
        for (name, quantity) in list {
            if let Some((slot, value)) = self.slot(name, quantity) {
                *slot = slot.wrapping_add(value);
            }
        }
    }

    fn set_max(&mut self, list: &[(String, Quantity)]) {
        for (name, quantity) in list {
            if let Some((slot, value)) = self.slot(name, quantity)
                && value > *slot
            {
                *slot = value;
            }
        }
    }

    fn resource_list(&self) -> BTreeMap<String, Quantity> {
        let mut list = BTreeMap::new();
        if self.milli_cpu > 0 {
            list.insert(
                "cpu".to_string(),
                Quantity::milli(self.milli_cpu, Format::DecimalSI),
            );
        }
        if self.memory > 0 {
            list.insert(
                "memory".to_string(),
                Quantity::whole(self.memory, Format::BinarySI),
            );
        }
        if self.ephemeral_storage > 0 {
            list.insert(
                "ephemeral-storage".to_string(),
                Quantity::whole(self.ephemeral_storage, Format::BinarySI),
            );
        }
        if self.pods > 0 {
            list.insert(
                "pods".to_string(),
                Quantity::whole(self.pods, Format::DecimalSI),
            );
        }
        for (name, value) in &self.scalars {
            if *value > 0 {
                let format = if name.starts_with("hugepages-") {
                    Format::BinarySI
                } else {
                    Format::DecimalSI
                };
                list.insert(name.clone(), Quantity::whole(*value, format));
            }
        }
        list
    }
}

/// Kubernetes' `IsScalarResourceName`: an extended resource (`example.com/gpu`), huge pages,
/// a `kubernetes.io/` resource, or attachable volumes.
fn is_scalar_resource(name: &str) -> bool {
    let native_prefixed = name.contains("kubernetes.io/");
    let native = !name.contains('/') || native_prefixed;
    let extended =
        !native && !name.starts_with("requests.") && is_qualified_name(&format!("requests.{name}"));
    extended
        || name.starts_with("hugepages-")
        || native_prefixed
        || name.starts_with("attachable-volumes-")
}

/// Requirements a script returned, read as Go reads them into `ReplicaRequirements`
/// (`with_namespace`) or a component's `ComponentReplicaRequirements` (no namespace field).
pub fn read(value: &Value, with_namespace: bool) -> Result<Requirements, String> {
    let Value::Object(fields) = value else {
        return Err(mismatch(
            "replicaRequirements",
            "ReplicaRequirements",
            value,
        ));
    };
    let mut requirements = Requirements::default();
    if let Some(claim) = fields.get("nodeClaim").filter(|v| !v.is_null()) {
        requirements.node_claim = Some(node_claim(claim)?);
    }
    if let Some(list) = fields.get("resourceRequest").filter(|v| !v.is_null()) {
        requirements.resource_request = resource_list(list, "resourceRequest")?
            .into_iter()
            .collect();
    }
    if with_namespace {
        requirements.namespace = string_field(fields, "namespace")?;
    }
    requirements.priority_class_name = string_field(fields, "priorityClassName")?;
    Ok(requirements)
}

/// Components a script returned (`[]Component`).
pub fn read_components(value: &Value) -> Result<Vec<Component>, String> {
    let Value::Array(items) = value else {
        return Err(mismatch("components", "[]Component", value));
    };
    items
        .iter()
        .map(|item| {
            let Value::Object(fields) = item else {
                return Err(mismatch("components", "Component", item));
            };
            let replicas = match fields.get("replicas") {
                None | Some(Value::Null) => 0,
                Some(Value::Number(n)) => n
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| {
                        format!(
                            "json: cannot unmarshal number {n} into Go struct field Component.replicas of type int32"
                        )
                    })?,
                Some(other) => return Err(mismatch("replicas", "int32", other)),
            };
            let requirements = match fields.get("replicaRequirements") {
                None | Some(Value::Null) => None,
                Some(value) => Some(read(value, false)?),
            };
            Ok(Component {
                name: string_field(fields, "name")?,
                replicas,
                requirements,
            })
        })
        .collect()
}

/// A typed `NodeClaim`.
fn node_claim(claim: &Value) -> Result<Value, String> {
    let Value::Object(fields) = claim else {
        return Err(mismatch("nodeClaim", "NodeClaim", claim));
    };
    let mut out = Map::new();
    if let Some(affinity) = fields.get("hardNodeAffinity").filter(|v| !v.is_null()) {
        out.insert("hardNodeAffinity".into(), node_selector(affinity)?);
    }
    if let Some(selector) = fields.get("nodeSelector").filter(|v| !v.is_null()) {
        let selector = string_map(selector, "nodeSelector")?;
        if !selector.is_empty() {
            out.insert("nodeSelector".into(), Value::Object(selector));
        }
    }
    if let Some(list) = fields.get("tolerations").filter(|v| !v.is_null()) {
        let tolerations = tolerations_of(list)?;
        if !tolerations.is_empty() {
            out.insert("tolerations".into(), Value::Array(tolerations));
        }
    }
    Ok(Value::Object(out))
}

/// A typed `NodeSelector`: its terms always written (`null` for none), as Go writes them.
fn node_selector(selector: &Value) -> Result<Value, String> {
    let Value::Object(fields) = selector else {
        return Err(mismatch("hardNodeAffinity", "NodeSelector", selector));
    };
    let terms = match fields.get("nodeSelectorTerms") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Array(terms)) => Value::Array(
            terms
                .iter()
                .map(|term| {
                    let Value::Object(term) = term else {
                        return Err(mismatch("nodeSelectorTerms", "NodeSelectorTerm", term));
                    };
                    let mut out = Map::new();
                    for field in ["matchExpressions", "matchFields"] {
                        if let Some(list) = term.get(field).filter(|v| !v.is_null()) {
                            let list = requirements_list(list, field)?;
                            if !list.is_empty() {
                                out.insert(field.into(), Value::Array(list));
                            }
                        }
                    }
                    Ok(Value::Object(out))
                })
                .collect::<Result<_, String>>()?,
        ),
        Some(other) => return Err(mismatch("nodeSelectorTerms", "[]NodeSelectorTerm", other)),
    };
    Ok(serde_json::json!({ "nodeSelectorTerms": terms }))
}

fn requirements_list(list: &Value, field: &str) -> Result<Vec<Value>, String> {
    let Value::Array(items) = list else {
        return Err(mismatch(field, "[]NodeSelectorRequirement", list));
    };
    items
        .iter()
        .map(|item| {
            let Value::Object(fields) = item else {
                return Err(mismatch(field, "NodeSelectorRequirement", item));
            };
            let mut out = Map::new();
            out.insert("key".into(), Value::String(string_field(fields, "key")?));
            out.insert(
                "operator".into(),
                Value::String(string_field(fields, "operator")?),
            );
            if let Some(values) = fields.get("values").filter(|v| !v.is_null()) {
                let Value::Array(values) = values else {
                    return Err(mismatch("values", "[]string", values));
                };
                let values: Vec<Value> = values
                    .iter()
                    .map(|v| match v {
                        Value::String(_) => Ok(v.clone()),
                        other => Err(mismatch("values", "string", other)),
                    })
                    .collect::<Result<_, String>>()?;
                if !values.is_empty() {
                    out.insert("values".into(), Value::Array(values));
                }
            }
            Ok(Value::Object(out))
        })
        .collect()
}

/// Typed `Toleration`s, empty fields left out.
fn tolerations_of(list: &Value) -> Result<Vec<Value>, String> {
    let Value::Array(items) = list else {
        return Err(mismatch("tolerations", "[]Toleration", list));
    };
    items
        .iter()
        .map(|item| {
            let Value::Object(fields) = item else {
                return Err(mismatch("tolerations", "Toleration", item));
            };
            let mut out = Map::new();
            for field in ["key", "operator", "value", "effect"] {
                let text = string_field(fields, field)?;
                if !text.is_empty() {
                    out.insert(field.into(), Value::String(text));
                }
            }
            match fields.get("tolerationSeconds") {
                None | Some(Value::Null) => {}
                Some(Value::Number(n)) if n.is_i64() => {
                    out.insert("tolerationSeconds".into(), Value::Number(n.clone()));
                }
                Some(other) => return Err(mismatch("tolerationSeconds", "int64", other)),
            }
            Ok(Value::Object(out))
        })
        .collect()
}

fn string_map(value: &Value, field: &str) -> Result<Map<String, Value>, String> {
    let Value::Object(entries) = value else {
        return Err(mismatch(field, "map[string]string", value));
    };
    entries
        .iter()
        .map(|(key, value)| match value {
            Value::String(_) => Ok((key.clone(), value.clone())),
            other => Err(mismatch(field, "string", other)),
        })
        .collect()
}

fn string_field(fields: &Map<String, Value>, field: &str) -> Result<String, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => Err(mismatch(field, "string", other)),
    }
}

/// Go's JSON type error, in its words.
fn mismatch(field: &str, go_type: &str, value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("json: cannot unmarshal {kind} into Go value of type {go_type} (field {field})")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_templates_request_sums_containers_and_takes_the_larger_init_container() {
        let template = json!({"spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}},
                {"resources": {"limits": {"cpu": 1, "memory": "1Gi", "nvidia.com/gpu": 2}}},
                {"resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "2"}}}
            ],
            "initContainers": [{"resources": {"requests": {"cpu": "3", "memory": "10Mi"}}}],
            "overhead": {"memory": "256Mi"},
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Exists", "value": ""}]
        }});
        let got = of_pod_template(&template).unwrap().unwrap();
        assert_eq!(
            got.to_json(),
            json!({
                "nodeClaim": {"nodeSelector": {"disk": "ssd"},
                              "tolerations": [{"key": "k", "operator": "Exists"}]},
                "resourceRequest": {"cpu": "3", "memory": "1536Mi", "nvidia.com/gpu": "2"}
            })
        );
    }

    #[test]
    fn nothing_asked_is_none_and_a_bad_quantity_is_an_error() {
        assert_eq!(
            of_pod_template(&json!({"spec": {"containers": [{}]}})),
            Ok(None)
        );
        assert!(
            of_pod_template(&json!({"spec": {"containers": [
                {"resources": {"requests": {"cpu": "lots"}}}]}}))
            .is_err()
        );
        // Only resources Kubernetes counts: a name that is no resource is left out.
        let odd = json!({"spec": {"containers": [{"resources": {"requests": {"bogus": "1"}}}]}});
        assert_eq!(of_pod_template(&odd), Ok(None));
    }

    #[test]
    fn requirements_compare_quantities_by_value() {
        let a = read(
            &json!({"resourceRequest": {"cpu": "1", "memory": "2Gi"}}),
            true,
        )
        .unwrap();
        let b = read(
            &json!({"resourceRequest": {"cpu": "1000m", "memory": "2147483648"}, "extra": 1}),
            true,
        )
        .unwrap();
        assert_eq!(a, b);
        let components = read_components(&json!([{"name": "w", "replicas": 2,
            "replicaRequirements": {"namespace": "x", "resourceRequest": {"cpu": 1}}}]))
        .unwrap();
        assert_eq!(components[0].requirements.as_ref().unwrap().namespace, "");
        assert!(read_components(&json!([{"name": "w", "replicas": 1.5}])).is_err());
    }
}
