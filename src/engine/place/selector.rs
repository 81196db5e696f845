//! Label selectors (Kubernetes `matchLabels`/`matchExpressions`), Karmada field selectors on
//! provider/region/zone, cluster affinities and taint tolerations: parsing with located errors
//! and matching against one cluster. It must not know about policies or resources.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::model::{ClusterSpec, Taint};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Operator {
    fn parse(text: &str) -> Option<Operator> {
        match text {
            "In" => Some(Operator::In),
            "NotIn" => Some(Operator::NotIn),
            "Exists" => Some(Operator::Exists),
            "DoesNotExist" => Some(Operator::DoesNotExist),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    fn matches_value(&self, value: Option<&str>) -> bool {
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => !value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operator {
            Operator::In if self.values.len() == 1 => write!(f, "{}={}", self.key, self.values[0]),
            Operator::In => write!(f, "{} in ({})", self.key, self.values.join(",")),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, self.values.join(",")),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
        }
    }
}

/// A Kubernetes label selector: all requirements ANDed; empty selects everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(labels.get(&r.key).map(String::as_str)))
    }

    pub fn matches_map(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(labels.and_then(|l| l.get(&r.key)).and_then(Value::as_str)))
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parses the selector at `pointer` in `doc`. Bad operators and shapes are errors.
    pub fn parse(doc: &Doc, pointer: &str) -> Result<LabelSelector, FleetError> {
        let Some(value) = doc.value.pointer(pointer) else {
            return Ok(LabelSelector::default());
        };
        let Some(obj) = value.as_object() else {
            if value.is_null() {
                return Ok(LabelSelector::default());
            }
            return Err(doc.error(
                pointer,
                "a label selector must be a mapping",
                "write `matchLabels: {key: value}` and/or `matchExpressions: [...]`",
            ));
        };
        let mut requirements = Vec::new();
        for key in obj.keys() {
            if key != "matchLabels" && key != "matchExpressions" {
                return Err(doc.error(
                    &format!("{pointer}/{key}"),
                    format!("unknown label selector field `{key}`"),
                    "a label selector has only `matchLabels` and `matchExpressions`",
                ));
            }
        }
        if let Some(labels) = obj.get("matchLabels") {
            let p = format!("{pointer}/matchLabels");
            let Some(labels) = labels.as_object() else {
                if labels.is_null() {
                    return Ok(LabelSelector { requirements });
                }
                return Err(doc.error(
                    &p,
                    "matchLabels must be a mapping of label to value",
                    "write `matchLabels: {env: prod}`",
                ));
            };
            for (key, value) in labels {
                let value = scalar_text(value).ok_or_else(|| {
                    doc.error(
                        &format!("{p}/{key}"),
                        "a label value must be a string",
                        "quote the value, e.g. \"true\"",
                    )
                })?;
                requirements.push(Requirement {
                    key: key.clone(),
                    operator: Operator::In,
                    values: vec![value],
                });
            }
        }
        if let Some(exprs) = obj.get("matchExpressions") {
            let p = format!("{pointer}/matchExpressions");
            requirements.extend(parse_expressions(doc, &p, exprs, None)?);
        }
        Ok(LabelSelector { requirements })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.requirements.is_empty() {
            return f.write_str("{} (everything)");
        }
        let parts: Vec<String> = self.requirements.iter().map(|r| r.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

/// A scalar as text: labels written as `true` or `1` in YAML still compare as strings.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn parse_expressions(
    doc: &Doc,
    pointer: &str,
    exprs: &Value,
    allowed_keys: Option<&[&str]>,
) -> Result<Vec<Requirement>, FleetError> {
    let Some(items) = exprs.as_array() else {
        if exprs.is_null() {
            return Ok(Vec::new());
        }
        return Err(doc.error(
            pointer,
            "matchExpressions must be a list",
            "write `- {key: env, operator: In, values: [prod]}`",
        ));
    };
    let mut out = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let p = format!("{pointer}/{idx}");
        let key = item.get("key").and_then(Value::as_str).ok_or_else(|| {
            doc.error(
                &format!("{p}/key"),
                "a match expression needs a `key`",
                "add `key: <label>`",
            )
        })?;
        if let Some(allowed) = allowed_keys
            && !allowed.contains(&key)
        {
            return Err(doc.error(
                &format!("{p}/key"),
                format!("field selector key `{key}` is not supported"),
                format!("use one of: {}", allowed.join(", ")),
            ));
        }
        let op_text = item.get("operator").and_then(Value::as_str).unwrap_or("");
        let operator = Operator::parse(op_text).ok_or_else(|| {
            doc.error(
                &format!("{p}/operator"),
                format!("unknown selector operator `{op_text}`"),
                "use In, NotIn, Exists or DoesNotExist (case-sensitive)",
            )
        })?;
        let values: Vec<String> = match item.get("values") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(vals)) => vals.iter().filter_map(scalar_text).collect(),
            Some(_) => {
                return Err(doc.error(
                    &format!("{p}/values"),
                    "values must be a list",
                    "write `values: [a, b]`",
                ));
            }
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(doc.error(
                    &format!("{p}/values"),
                    format!("operator {op_text} needs at least one value"),
                    "add `values: [...]`",
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(doc.error(
                    &format!("{p}/values"),
                    format!("operator {op_text} takes no values"),
                    "remove `values`",
                ));
            }
            _ => {}
        }
        out.push(Requirement {
            key: key.to_string(),
            operator,
            values,
        });
    }
    Ok(out)
}

/// Karmada's field selector over the cluster's provider, region and zones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    pub requirements: Vec<Requirement>,
}

impl FieldSelector {
    pub fn parse(doc: &Doc, pointer: &str) -> Result<FieldSelector, FleetError> {
        let Some(value) = doc.value.pointer(pointer) else {
            return Ok(FieldSelector::default());
        };
        let exprs = value
            .get("matchExpressions")
            .cloned()
            .unwrap_or(Value::Null);
        let requirements = parse_expressions(
            doc,
            &format!("{pointer}/matchExpressions"),
            &exprs,
            Some(&["provider", "region", "zone"]),
        )?;
        Ok(FieldSelector { requirements })
    }

    /// Why the cluster fails the selector, or `None` when it matches. For `zone`, `In` needs
    /// every zone of the cluster in the values and `NotIn` needs none of them (as upstream).
    pub fn mismatch(&self, cluster: &ClusterSpec) -> Option<String> {
        for r in &self.requirements {
            let ok = match r.key.as_str() {
                "provider" => r.matches_value(cluster.provider.as_deref()),
                "region" => r.matches_value(cluster.region.as_deref()),
                _ => match r.operator {
                    Operator::In => {
                        !cluster.zones.is_empty()
                            && cluster.zones.iter().all(|z| r.values.contains(z))
                    }
                    Operator::NotIn => cluster.zones.iter().all(|z| !r.values.contains(z)),
                    Operator::Exists => !cluster.zones.is_empty(),
                    Operator::DoesNotExist => cluster.zones.is_empty(),
                },
            };
            if !ok {
                let actual = match r.key.as_str() {
                    "provider" => cluster.provider.clone().unwrap_or_else(|| "unset".into()),
                    "region" => cluster.region.clone().unwrap_or_else(|| "unset".into()),
                    _ if cluster.zones.is_empty() => "unset".into(),
                    _ => cluster.zones.join(","),
                };
                return Some(format!(
                    "fieldSelector {r} does not match ({} {actual})",
                    r.key
                ));
            }
        }
        None
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(|r| r.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

/// Karmada's ClusterAffinity: names, exclusions, label and field selectors, all ANDed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterAffinity {
    pub cluster_names: Vec<String>,
    pub exclude: Vec<String>,
    pub label_selector: Option<LabelSelector>,
    pub field_selector: Option<FieldSelector>,
}

impl ClusterAffinity {
    pub fn parse(doc: &Doc, pointer: &str) -> Result<ClusterAffinity, FleetError> {
        let value = doc.value.pointer(pointer).cloned().unwrap_or(Value::Null);
        if !value.is_object() && !value.is_null() {
            return Err(doc.error(
                pointer,
                "a cluster affinity must be a mapping",
                "use clusterNames, exclude, labelSelector and/or fieldSelector",
            ));
        }
        let names = |key: &str| -> Result<Vec<String>, FleetError> {
            match value.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => Ok(items.iter().filter_map(scalar_text).collect()),
                Some(_) => Err(doc.error(
                    &format!("{pointer}/{key}"),
                    format!("{key} must be a list of cluster names"),
                    format!("write `{key}: [member1, member2]`"),
                )),
            }
        };
        let label_selector = match value.get("labelSelector") {
            None | Some(Value::Null) => None,
            Some(_) => Some(LabelSelector::parse(
                doc,
                &format!("{pointer}/labelSelector"),
            )?),
        };
        let field_selector = match value.get("fieldSelector") {
            None | Some(Value::Null) => None,
            Some(_) => Some(FieldSelector::parse(
                doc,
                &format!("{pointer}/fieldSelector"),
            )?),
        };
        Ok(ClusterAffinity {
            cluster_names: names("clusterNames")?,
            exclude: names("exclude")?,
            label_selector,
            field_selector,
        })
    }

    /// Why `cluster` is outside this affinity, or `None` when it is inside.
    pub fn mismatch(&self, cluster: &ClusterSpec) -> Option<String> {
        if self.exclude.iter().any(|n| n == &cluster.name) {
            return Some("excluded by clusterAffinity.exclude".into());
        }
        if let Some(selector) = &self.label_selector
            && !selector.matches(&cluster.labels)
        {
            return Some(format!("labelSelector {selector} does not match"));
        }
        if let Some(selector) = &self.field_selector
            && let Some(reason) = selector.mismatch(cluster)
        {
            return Some(reason);
        }
        if !self.cluster_names.is_empty() && !self.cluster_names.contains(&cluster.name) {
            return Some("not in clusterAffinity.clusterNames".into());
        }
        None
    }

    /// Short human form: `all`, `3 clusters`, `selector env=prod`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.cluster_names.is_empty() {
            parts.push(match self.cluster_names.len() {
                1 => self.cluster_names[0].clone(),
                n => format!("{n} clusters"),
            });
        }
        if let Some(s) = &self.label_selector {
            parts.push(format!("selector {s}"));
        }
        if let Some(s) = &self.field_selector {
            parts.push(format!("fields {s}"));
        }
        if !self.exclude.is_empty() {
            parts.push(format!("excluding {}", self.exclude.join(",")));
        }
        if parts.is_empty() {
            "all".into()
        } else {
            parts.join(" ")
        }
    }
}

/// The taint effects of Kubernetes and Karmada, the ones a `clusterTolerations` entry may name.
pub const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// A toleration as Kubernetes and Karmada spell it (OCM's has the same shape over its own
/// effects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    /// `Equal` (default) or `Exists`.
    pub exists: bool,
    pub value: String,
    pub effect: String,
}

impl Toleration {
    pub fn parse_list(doc: &Doc, pointer: &str) -> Result<Vec<Toleration>, FleetError> {
        let Some(value) = doc.value.pointer(pointer) else {
            return Ok(Vec::new());
        };
        let Some(items) = value.as_array() else {
            if value.is_null() {
                return Ok(Vec::new());
            }
            return Err(doc.error(
                pointer,
                "clusterTolerations must be a list",
                "write `- {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}`",
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(idx, item)| {
                Toleration::parse(
                    doc,
                    &format!("{pointer}/{idx}"),
                    item,
                    &TAINT_EFFECTS,
                    "use NoSchedule, PreferNoSchedule or NoExecute (or leave it empty for all)",
                )
            })
            .collect()
    }

    /// One toleration of a list, `item` at `pointer`: `Equal` (the default) or `Exists`, an
    /// effect among the dialect's `effects` (or none, for all of them; `effect_hint` names
    /// them when another is written), and a key unless the operator is `Exists`. Each dialect
    /// keeps its own effects and its own words about the list.
    pub fn parse(
        doc: &Doc,
        pointer: &str,
        item: &Value,
        effects: &[&str],
        effect_hint: &str,
    ) -> Result<Toleration, FleetError> {
        let text = |k: &str| item.get(k).and_then(scalar_text).unwrap_or_default();
        let exists = match text("operator").as_str() {
            "" | "Equal" => false,
            "Exists" => true,
            other => {
                return Err(doc.error(
                    &format!("{pointer}/operator"),
                    format!("unknown toleration operator `{other}`"),
                    "use Equal or Exists",
                ));
            }
        };
        let effect = text("effect");
        if !effect.is_empty() && !effects.contains(&effect.as_str()) {
            return Err(doc.error(
                &format!("{pointer}/effect"),
                format!("unknown taint effect `{effect}`"),
                effect_hint,
            ));
        }
        let key = text("key");
        if key.is_empty() && !exists {
            return Err(doc.error(
                &format!("{pointer}/key"),
                "a toleration without a key must use operator Exists",
                "add `operator: Exists` to tolerate every taint, or set `key`",
            ));
        }
        Ok(Toleration {
            key,
            exists,
            value: text("value"),
            effect,
        })
    }

    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        self.exists || self.value == taint.value
    }
}

impl fmt::Display for Toleration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = if self.key.is_empty() { "*" } else { &self.key };
        if self.exists {
            write!(f, "{key} Exists")?;
        } else {
            write!(f, "{key}={}", self.value)?;
        }
        if !self.effect.is_empty() {
            write!(f, ":{}", self.effect)?;
        }
        Ok(())
    }
}

/// The first NoSchedule/NoExecute taint of the cluster that no toleration tolerates.
pub fn untolerated_taint<'a>(
    cluster: &'a ClusterSpec,
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    cluster
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;

    fn doc(text: &str) -> Doc {
        let (mut docs, errors) = parse_files(&[SourceFile {
            path: "t.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        docs.remove(0)
    }

    fn cluster(name: &str, labels: &[(&str, &str)]) -> ClusterSpec {
        ClusterSpec {
            name: name.into(),
            context: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            provider: Some("aws".into()),
            region: Some("eu-west".into()),
            zones: vec!["eu-west-1a".into(), "eu-west-1b".into()],
            ..Default::default()
        }
    }

    #[test]
    fn label_selector_table() {
        let c = cluster("a", &[("env", "prod"), ("tier", "edge")]);
        let cases = [
            ("s: {}", true),
            ("s: {matchLabels: {env: prod}}", true),
            ("s: {matchLabels: {env: dev}}", false),
            (
                "s: {matchExpressions: [{key: env, operator: In, values: [dev, prod]}]}",
                true,
            ),
            (
                "s: {matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}",
                false,
            ),
            (
                "s: {matchExpressions: [{key: gpu, operator: NotIn, values: [x]}]}",
                true,
            ),
            (
                "s: {matchExpressions: [{key: tier, operator: Exists}]}",
                true,
            ),
            (
                "s: {matchExpressions: [{key: tier, operator: DoesNotExist}]}",
                false,
            ),
            (
                "s: {matchLabels: {env: prod}, matchExpressions: [{key: tier, operator: In, values: [core]}]}",
                false,
            ),
        ];
        for (text, want) in cases {
            let d = doc(text);
            let s = LabelSelector::parse(&d, "/s").unwrap();
            assert_eq!(s.matches(&c.labels), want, "{text}");
        }
    }

    #[test]
    fn bad_operator_is_located_and_explained() {
        let d = doc(
            "a: 1\ns:\n  matchExpressions:\n  - key: env\n    operator: Equals\n    values: [x]\n",
        );
        let err = LabelSelector::parse(&d, "/s").unwrap_err();
        assert_eq!(err.location.line, 5);
        assert_eq!(err.field, "s.matchExpressions[0].operator");
        assert!(err.message.contains("Equals"));
        assert!(err.hint.contains("In, NotIn"));
    }

    #[test]
    fn field_selector_table() {
        let c = cluster("a", &[]);
        let cases = [
            (
                "f: {matchExpressions: [{key: region, operator: In, values: [eu-west]}]}",
                true,
            ),
            (
                "f: {matchExpressions: [{key: region, operator: NotIn, values: [eu-west]}]}",
                false,
            ),
            (
                "f: {matchExpressions: [{key: provider, operator: In, values: [gcp]}]}",
                false,
            ),
            (
                "f: {matchExpressions: [{key: zone, operator: In, values: [eu-west-1a, eu-west-1b]}]}",
                true,
            ),
            (
                "f: {matchExpressions: [{key: zone, operator: In, values: [eu-west-1a]}]}",
                false,
            ),
            (
                "f: {matchExpressions: [{key: zone, operator: NotIn, values: [eu-west-1c]}]}",
                true,
            ),
        ];
        for (text, want) in cases {
            let d = doc(text);
            let s = FieldSelector::parse(&d, "/f").unwrap();
            assert_eq!(s.mismatch(&c).is_none(), want, "{text}");
        }
        let d = doc("f: {matchExpressions: [{key: cloud, operator: In, values: [x]}]}");
        assert!(FieldSelector::parse(&d, "/f").is_err());
    }

    #[test]
    fn affinity_combines_everything() {
        let c = cluster("a", &[("env", "prod")]);
        let cases = [
            ("a: {}", true),
            ("a: {clusterNames: [a, b]}", true),
            ("a: {clusterNames: [b]}", false),
            ("a: {exclude: [a]}", false),
            (
                "a: {clusterNames: [a], labelSelector: {matchLabels: {env: dev}}}",
                false,
            ),
            (
                "a: {labelSelector: {matchLabels: {env: prod}}, fieldSelector: {matchExpressions: [{key: provider, operator: In, values: [aws]}]}}",
                true,
            ),
        ];
        for (text, want) in cases {
            let d = doc(text);
            let a = ClusterAffinity::parse(&d, "/a").unwrap();
            assert_eq!(a.mismatch(&c).is_none(), want, "{text}");
        }
    }

    #[test]
    fn tolerations_table() {
        let mut c = cluster("gpu", &[]);
        c.taints = vec![Taint {
            key: "dedicated".into(),
            value: "gpu".into(),
            effect: "NoSchedule".into(),
        }];
        let cases = [
            ("t: []", false),
            (
                "t: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]",
                true,
            ),
            ("t: [{key: dedicated, value: gpu}]", true),
            ("t: [{key: dedicated, operator: Exists}]", true),
            ("t: [{operator: Exists}]", true),
            ("t: [{key: dedicated, value: cpu}]", false),
            (
                "t: [{key: dedicated, operator: Exists, effect: NoExecute}]",
                false,
            ),
        ];
        for (text, want) in cases {
            let d = doc(text);
            let t = Toleration::parse_list(&d, "/t").unwrap();
            assert_eq!(untolerated_taint(&c, &t).is_none(), want, "{text}");
        }
        c.taints[0].effect = "PreferNoSchedule".into();
        assert!(
            untolerated_taint(&c, &[]).is_none(),
            "PreferNoSchedule never filters"
        );
    }
}
