//! Drift ignore rules (`flotilla.dev/v1alpha1 DriftIgnore` documents in the fleet directory):
//! parsing with located errors, matching a rule to a (cluster, object, field), and taking
//! ignored fields out of flotilla's intent before it is applied. It must not do I/O or talk to
//! clusters: callers hand it the rendered intent and the live object.
//!
//! ```yaml
//! apiVersion: flotilla.dev/v1alpha1
//! kind: DriftIgnore
//! metadata:
//!   name: web-image
//! spec:
//!   clusters: [west, "lab-*"]                    # optional: names or globs (default: all)
//!   clusterSelector: {matchLabels: {env: prod}}  # optional: inventory labels
//!   resources:                                   # required: kind and name (globs allowed)
//!   - {kind: Deployment, namespace: shop, name: web}
//!   paths:                                       # required: JSON pointers (RFC 6901)
//!   - /spec/template/spec/containers/name=web/image
//!   managers: ["hpa-*"]                          # optional: only while one of these owns it
//! ```
//!
//! A path ignores the field and everything below it. On a list, a token may be an index
//! (into the live list, as `drift` reports it), `*` (any item), or `key=value[,key=value]`
//! selecting a keyed item (containers by name, ports by containerPort…), which stays right
//! when the order of the list changes. A path into an unkeyed list (`args`) covers the whole
//! list, which the server and drift treat as one value.
//!
//! What apply does with an ignored field (server-side apply semantics): a field that another
//! manager owns is left out of the intent, so flotilla stops claiming it and never takes it
//! back; SSA keeps the value because its owner still holds it. A field only flotilla owns (or
//! nobody, yet) would be *deleted or reset to its default* by the server if flotilla simply
//! dropped it, so instead the intent carries the live value: nothing changes on the cluster,
//! and flotilla stays its owner. A field missing on the cluster is left out. A new object is
//! created with the desired value.

use serde_json::{Map, Value};

use crate::engine::compare::diff::{self, Segment, list_keys};
use crate::engine::document::parse::Doc;
use crate::engine::document::source::{FleetError, SourceLocation};
use crate::engine::place::selector::{LabelSelector, scalar_text};
use crate::glob::glob_match;
use crate::model::{ClusterSpec, ResourceRef};

pub const API_VERSION: &str = "flotilla.dev/v1alpha1";
pub const KIND: &str = "DriftIgnore";

/// Which objects a rule covers; every part is a glob, absent parts match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePattern {
    pub api_version: Option<String>,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl ResourcePattern {
    pub fn matches(&self, resource: &ResourceRef) -> bool {
        self.api_version
            .as_ref()
            .is_none_or(|p| glob_match(p, &resource.api_version))
            && (glob_match(&self.kind, &resource.kind)
                || self.kind.eq_ignore_ascii_case(&resource.kind))
            && self
                .namespace
                .as_ref()
                .is_none_or(|p| glob_match(p, resource.namespace.as_deref().unwrap_or("")))
            && glob_match(&self.name, &resource.name)
    }
}

/// One JSON pointer of a rule, split into unescaped tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    pub text: String,
    pub tokens: Vec<String>,
}

impl PathPattern {
    /// Parses an RFC 6901 pointer (`/a/b~1c`); the error says what is wrong.
    pub fn parse(text: &str) -> Result<PathPattern, String> {
        if text.is_empty() || !text.starts_with('/') {
            return Err(format!(
                "{text:?} is not a JSON pointer: it must start with `/`, e.g. /spec/replicas"
            ));
        }
        let mut tokens = Vec::new();
        for raw in text.split('/').skip(1) {
            let mut token = String::new();
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => token.push('~'),
                        Some('1') => token.push('/'),
                        _ => {
                            return Err(format!(
                                "{text:?}: `~` must be followed by 0 (for ~) or 1 (for /)"
                            ));
                        }
                    }
                } else {
                    token.push(c);
                }
            }
            tokens.push(token);
        }
        Ok(PathPattern {
            text: text.to_string(),
            tokens,
        })
    }

    /// Whether this pattern covers `path`: the field itself or an ancestor of it — or a list
    /// the pattern points into, since drift (like server-side apply) treats an unkeyed list
    /// as one value, and apply then leaves the whole list alone.
    pub fn covers(&self, path: &[Segment]) -> bool {
        let prefix_matches = self
            .tokens
            .iter()
            .zip(path)
            .all(|(token, segment)| token_matches(token, segment));
        if self.tokens.len() <= path.len() {
            return prefix_matches;
        }
        // Only into an unkeyed list: drift at a keyed list means an item is missing, which a
        // path to one item must not hide.
        let unkeyed =
            matches!(path.last(), Some(Segment::Field(name)) if list_keys(name).is_none());
        prefix_matches
            && unkeyed
            && self
                .tokens
                .get(path.len())
                .is_some_and(|next| next == "*" || next.bytes().all(|b| b.is_ascii_digit()))
    }
}

fn token_matches(token: &str, segment: &Segment) -> bool {
    if token == "*" {
        return true;
    }
    match segment {
        Segment::Field(name) => token == name,
        Segment::Keyed { key, index } => {
            token == index.to_string() || keyed_selector(token).is_some_and(|s| selects(&s, key))
        }
    }
}

/// `name=web` or `containerPort=80,protocol=TCP`.
fn keyed_selector(token: &str) -> Option<Vec<(&str, &str)>> {
    if !token.contains('=') {
        return None;
    }
    token
        .split(',')
        .map(|pair| pair.split_once('='))
        .collect::<Option<Vec<_>>>()
}

fn selects(selector: &[(&str, &str)], item: &Map<String, Value>) -> bool {
    selector.iter().all(|(k, v)| {
        item.get(*k)
            .and_then(scalar_text)
            .is_some_and(|text| text == *v)
    })
}

/// A parsed DriftIgnore document.
#[derive(Debug, Clone, PartialEq)]
pub struct IgnoreRule {
    pub name: String,
    pub source: SourceLocation,
    pub clusters: Vec<String>,
    pub cluster_selector: LabelSelector,
    pub resources: Vec<ResourcePattern>,
    pub paths: Vec<PathPattern>,
    pub managers: Vec<String>,
}

const SPEC_FIELDS: &[&str] = &[
    "clusters",
    "clusterSelector",
    "resources",
    "paths",
    "managers",
];

fn strings(doc: &Doc, pointer: &str, example: &str) -> Result<Vec<String>, FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                scalar_text(item).filter(|s| !s.is_empty()).ok_or_else(|| {
                    doc.error(
                        &format!("{pointer}/{i}"),
                        "must be a non-empty string",
                        format!("write e.g. `{example}`"),
                    )
                })
            })
            .collect(),
        Some(_) => Err(doc.error(
            pointer,
            "must be a list of strings",
            format!("write e.g. `[{example}]`"),
        )),
    }
}

impl IgnoreRule {
    /// Parses a DriftIgnore document; cluster names without glob characters must be in the
    /// inventory.
    pub fn parse(doc: &Doc, clusters: &[ClusterSpec]) -> Result<IgnoreRule, FleetError> {
        if doc.api_version() != API_VERSION {
            return Err(doc.error(
                "/apiVersion",
                format!(
                    "{} is not a known version of DriftIgnore",
                    doc.api_version()
                ),
                format!("use `apiVersion: {API_VERSION}`"),
            ));
        }
        let name = doc.name().to_string();
        if name.is_empty() {
            return Err(doc.error(
                "/metadata/name",
                "a DriftIgnore needs a name",
                "add `metadata.name`",
            ));
        }
        let Some(spec) = doc.value.get("spec").and_then(Value::as_object) else {
            return Err(doc.error(
                "/spec",
                "a DriftIgnore needs a spec with resources and paths",
                "add `spec: {resources: [{kind: Deployment, name: web}], paths: [/spec/replicas]}`",
            ));
        };
        if let Some(key) = spec.keys().find(|k| !SPEC_FIELDS.contains(&k.as_str())) {
            return Err(doc.error(
                &format!("/spec/{key}"),
                format!("unknown field `{key}`"),
                format!("a DriftIgnore spec has {}", SPEC_FIELDS.join(", ")),
            ));
        }
        let cluster_names = strings(doc, "/spec/clusters", "member-1")?;
        for (i, pattern) in cluster_names.iter().enumerate() {
            let is_glob = pattern.contains(['*', '?']);
            if !is_glob && !clusters.iter().any(|c| &c.name == pattern) {
                let known: Vec<&str> = clusters.iter().map(|c| c.name.as_str()).collect();
                return Err(doc.error(
                    &format!("/spec/clusters/{i}"),
                    format!("no cluster named {pattern} in the inventory"),
                    format!("use one of: {}", known.join(", ")),
                ));
            }
        }
        let cluster_selector = LabelSelector::parse(doc, "/spec/clusterSelector")?;
        let resources = match spec.get("resources") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, _)| parse_resource(doc, &format!("/spec/resources/{i}")))
                .collect::<Result<Vec<_>, _>>()?,
            _ => {
                return Err(doc.error(
                    "/spec/resources",
                    "a DriftIgnore needs a non-empty list of resources",
                    "add `resources: [{kind: Deployment, namespace: shop, name: web}]` (globs allowed)",
                ));
            }
        };
        let path_texts = strings(doc, "/spec/paths", "/spec/replicas")?;
        if path_texts.is_empty() {
            return Err(doc.error(
                "/spec/paths",
                "a DriftIgnore needs at least one path",
                "add `paths: [/spec/replicas]` (JSON pointers)",
            ));
        }
        let paths = path_texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                PathPattern::parse(text).map_err(|message| {
                    doc.error(
                        &format!("/spec/paths/{i}"),
                        message,
                        "write a JSON pointer such as /spec/template/spec/containers/name=web/image",
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let managers = strings(doc, "/spec/managers", "kubectl")?;
        Ok(IgnoreRule {
            name,
            source: doc.location(""),
            clusters: cluster_names,
            cluster_selector,
            resources,
            paths,
            managers,
        })
    }

    /// Whether the rule is about this cluster.
    pub fn covers_cluster(&self, cluster: &ClusterSpec) -> bool {
        (self.clusters.is_empty() || self.clusters.iter().any(|p| glob_match(p, &cluster.name)))
            && self.cluster_selector.matches(&cluster.labels)
    }

    /// Whether the rule is about this object.
    pub fn covers_resource(&self, resource: &ResourceRef) -> bool {
        self.resources.iter().any(|p| p.matches(resource))
    }

    /// Whether the rule ignores the field at `path` whose live value `owner` manages.
    pub fn covers_field(&self, path: &[Segment], owner: Option<&str>) -> bool {
        self.paths.iter().any(|p| p.covers(path)) && self.manager_ok(owner)
    }

    fn manager_ok(&self, owner: Option<&str>) -> bool {
        self.managers.is_empty()
            || owner.is_some_and(|o| self.managers.iter().any(|m| glob_match(m, o)))
    }

    /// A new rule as a document for the fleet directory.
    pub fn document(
        name: &str,
        clusters: &[String],
        resources: &[ResourceRef],
        paths: &[String],
    ) -> Value {
        let mut spec = Map::new();
        if !clusters.is_empty() {
            spec.insert("clusters".into(), Value::from(clusters.to_vec()));
        }
        spec.insert(
            "resources".into(),
            Value::Array(
                resources
                    .iter()
                    .map(|r| {
                        let mut m = Map::new();
                        m.insert("apiVersion".into(), Value::from(r.api_version.clone()));
                        m.insert("kind".into(), Value::from(r.kind.clone()));
                        if let Some(ns) = &r.namespace {
                            m.insert("namespace".into(), Value::from(ns.clone()));
                        }
                        m.insert("name".into(), Value::from(r.name.clone()));
                        Value::Object(m)
                    })
                    .collect(),
            ),
        );
        spec.insert("paths".into(), Value::from(paths.to_vec()));
        serde_json::json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": name},
            "spec": spec,
        })
    }
}

fn parse_resource(doc: &Doc, pointer: &str) -> Result<ResourcePattern, FleetError> {
    let Some(item) = doc.value.pointer(pointer).and_then(Value::as_object) else {
        return Err(doc.error(
            pointer,
            "a resource must be a mapping",
            "write `{kind: Deployment, namespace: shop, name: web}`",
        ));
    };
    if let Some(key) = item
        .keys()
        .find(|k| !["apiVersion", "kind", "namespace", "name"].contains(&k.as_str()))
    {
        return Err(doc.error(
            &format!("{pointer}/{key}"),
            format!("unknown field `{key}`"),
            "a resource has apiVersion, kind, namespace and name",
        ));
    }
    let text = |k: &str| item.get(k).and_then(scalar_text).filter(|s| !s.is_empty());
    let kind = text("kind").ok_or_else(|| {
        doc.error(
            &format!("{pointer}/kind"),
            "a resource needs kind",
            "add e.g. `kind: Deployment` (a glob such as `*` is allowed)",
        )
    })?;
    let name = text("name").ok_or_else(|| {
        doc.error(
            &format!("{pointer}/name"),
            "a resource needs name",
            "add e.g. `name: web` (a glob such as `web-*` is allowed)",
        )
    })?;
    Ok(ResourcePattern {
        api_version: text("apiVersion"),
        kind,
        namespace: text("namespace"),
        name,
    })
}

/// The rules among `rules` for one cluster and object.
pub fn rules_for<'a>(
    rules: &'a [IgnoreRule],
    resource: &ResourceRef,
) -> impl Iterator<Item = &'a IgnoreRule> {
    rules.iter().filter(move |r| r.covers_resource(resource))
}

/// Whether any of `rules` ignores the drifted field at `path` of `live`.
pub fn is_ignored(rules: &[&IgnoreRule], live: &Value, path: &[Segment], ourselves: &str) -> bool {
    if rules.is_empty() {
        return false;
    }
    let owner = diff::owner_of(live, path, ourselves).map(|(m, _)| m);
    rules.iter().any(|r| r.covers_field(path, owner.as_deref()))
}

/// A drift path as a pointer with every keyed list item named by its key instead of its
/// index (`/…/containers/name=web/image`), so a rule written from it survives reordering.
pub fn stable_pointer(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        out.push('/');
        match segment {
            Segment::Field(name) => {
                out.push_str(&crate::engine::document::parse::escape_token(name))
            }
            Segment::Keyed { key, index } => {
                let pairs: Vec<String> = key
                    .iter()
                    .filter_map(|(k, v)| {
                        scalar_text(v).map(|t| {
                            format!("{k}={}", crate::engine::document::parse::escape_token(&t))
                        })
                    })
                    .collect();
                if pairs.is_empty() {
                    out.push_str(&index.to_string());
                } else {
                    out.push_str(&pairs.join(","));
                }
            }
        }
    }
    out
}

/// One concrete place in the intent a rule path resolves to, with where it is in live.
struct Place {
    /// Tokens into the intent (map keys and intent list indices).
    intent: Vec<String>,
    /// The same place in live as drift segments, when live has it.
    live: Option<Vec<Segment>>,
}

/// Resolves a rule path against the intent, matching keyed items to live by key. A path
/// into an atomic (unkeyed) list stops at the list: the list is the unit SSA owns.
fn resolve(intent: &Value, live: &Value, tokens: &[String]) -> Vec<Place> {
    let mut out = Vec::new();
    walk(
        intent,
        Some(live),
        "",
        tokens,
        &mut Vec::new(),
        &mut Some(Vec::new()),
        &mut out,
    );
    out
}

fn walk(
    intent: &Value,
    live: Option<&Value>,
    field: &str,
    tokens: &[String],
    at: &mut Vec<String>,
    live_at: &mut Option<Vec<Segment>>,
    out: &mut Vec<Place>,
) {
    let Some((token, rest)) = tokens.split_first() else {
        out.push(Place {
            intent: at.clone(),
            live: live.and(live_at.clone()),
        });
        return;
    };
    match intent {
        Value::Object(map) => {
            let keys: Vec<&String> = if token == "*" {
                map.keys().collect()
            } else {
                map.keys().filter(|k| *k == token).collect()
            };
            for key in keys {
                let child_live = live.and_then(|l| l.get(key.as_str()));
                at.push(key.clone());
                let mut next_live = live_at.clone().map(|mut s| {
                    s.push(Segment::Field(key.clone()));
                    s
                });
                walk(
                    &map[key.as_str()],
                    child_live,
                    key,
                    rest,
                    at,
                    &mut next_live,
                    out,
                );
                at.pop();
            }
        }
        Value::Array(items) => {
            let Some(keys) = list_keys(field) else {
                // Atomic list: the whole list is the place.
                out.push(Place {
                    intent: at.clone(),
                    live: live.and(live_at.clone()),
                });
                return;
            };
            let live_items = live.and_then(Value::as_array);
            let key_of = |item: &Value| -> Map<String, Value> {
                keys.iter()
                    .filter_map(|k| item.get(*k).map(|v| ((*k).to_string(), v.clone())))
                    .collect()
            };
            for (i, item) in items.iter().enumerate() {
                let key = key_of(item);
                let live_match = live_items.and_then(|l| {
                    l.iter()
                        .enumerate()
                        .find(|(_, li)| !key.is_empty() && key_of(li) == key)
                });
                let segment = Segment::Keyed {
                    key: key.clone(),
                    index: live_match.map(|(j, _)| j).unwrap_or(usize::MAX),
                };
                let selected = token == "*"
                    || keyed_selector(token).is_some_and(|s| selects(&s, &key))
                    || token
                        .parse::<usize>()
                        .is_ok_and(|n| live_match.is_some_and(|(j, _)| j == n));
                if !selected {
                    continue;
                }
                at.push(i.to_string());
                let mut next_live = match (live_at.clone(), live_match) {
                    (Some(mut s), Some(_)) => {
                        s.push(segment);
                        Some(s)
                    }
                    _ => None,
                };
                walk(
                    item,
                    live_match.map(|(_, li)| li),
                    "",
                    rest,
                    at,
                    &mut next_live,
                    out,
                );
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer_of(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", crate::engine::document::parse::escape_token(t)))
        .collect()
}

/// The intent with the fields `rules` ignore taken care of (see the module docs): left out
/// when another manager owns the live value or live lacks it, set to the live value when
/// only `ourselves` owns it. `live` `None` (the object does not exist) keeps the intent.
pub fn adjust_intent(
    intent: &Value,
    live: Option<&Value>,
    rules: &[&IgnoreRule],
    ourselves: &str,
) -> Value {
    let Some(live) = live else {
        return intent.clone();
    };
    let mut out = intent.clone();
    let mut removals: Vec<Vec<String>> = Vec::new();
    for rule in rules {
        for path in &rule.paths {
            for place in resolve(intent, live, &path.tokens) {
                if place.intent.is_empty()
                    || place
                        .intent
                        .first()
                        .is_some_and(|t| t == "apiVersion" || t == "kind")
                {
                    continue;
                }
                let owner = place
                    .live
                    .as_ref()
                    .and_then(|segments| diff::owner_of(live, segments, ourselves))
                    .map(|(m, _)| m);
                if !rule.manager_ok(owner.as_deref()) {
                    continue;
                }
                let live_value = place
                    .live
                    .as_ref()
                    .and_then(|segments| value_at(live, segments));
                match (live_value, owner.as_deref()) {
                    (Some(value), None) => set_at(&mut out, &place.intent, value.clone()),
                    (Some(value), Some(o)) if o == ourselves => {
                        set_at(&mut out, &place.intent, value.clone())
                    }
                    _ => removals.push(place.intent),
                }
            }
        }
    }
    // Remove deepest first, and list items from the end, so indices stay valid.
    removals.sort_by(|a, b| b.cmp(a));
    removals.dedup();
    for tokens in removals {
        remove_at(&mut out, &tokens);
    }
    out
}

fn value_at<'a>(live: &'a Value, segments: &[Segment]) -> Option<&'a Value> {
    let mut node = live;
    for segment in segments {
        node = match segment {
            Segment::Field(name) => node.get(name)?,
            Segment::Keyed { index, .. } => node.get(*index)?,
        };
    }
    Some(node)
}

fn set_at(root: &mut Value, tokens: &[String], value: Value) {
    if let Some(slot) = root.pointer_mut(&pointer_of(tokens)) {
        *slot = value;
    }
}

fn remove_at(root: &mut Value, tokens: &[String]) {
    let Some((last, parent)) = tokens.split_last() else {
        return;
    };
    match root.pointer_mut(&pointer_of(parent)) {
        Some(Value::Object(map)) => {
            map.remove(last);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;
    use serde_json::json;

    fn doc(text: &str) -> Doc {
        let (docs, errors) = parse_files(&[SourceFile {
            path: "ignore.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        docs.into_iter().next().unwrap()
    }

    fn clusters() -> Vec<ClusterSpec> {
        ["east", "west"]
            .iter()
            .map(|n| ClusterSpec {
                name: (*n).into(),
                context: (*n).into(),
                labels: [("env".to_string(), "prod".to_string())].into(),
                ..ClusterSpec::default()
            })
            .collect()
    }

    const RULE: &str = "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {name: r}\nspec:\n  clusters: [west]\n  resources: [{kind: Deployment, namespace: shop, name: web}]\n  paths: [/spec/template/spec/containers/name=web/image]\n";

    fn rule() -> IgnoreRule {
        IgnoreRule::parse(&doc(RULE), &clusters()).unwrap()
    }

    fn web(image: &str, managers: Value) -> Value {
        let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "managedFields": managers},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "side", "image": "envoy"},
                {"name": "web", "image": image, "ports": [{"containerPort": 80}]}]}}}});
        if managers.as_array().is_some_and(Vec::is_empty) {
            object["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
        }
        object
    }

    #[test]
    fn a_rule_covers_its_cluster_object_and_path() {
        let rule = rule();
        let c = clusters();
        assert!(rule.covers_cluster(&c[1]) && !rule.covers_cluster(&c[0]));
        let resource = ResourceRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("shop".into()),
            name: "web".into(),
        };
        assert!(rule.covers_resource(&resource));
        let desired = web("nginx:1", json!([]));
        let live = web("nginx:2", json!([]));
        let drift = diff::drifted_fields(&desired, &live);
        assert_eq!(drift.len(), 1);
        assert!(rule.covers_field(&drift[0].path, None));
        let mut replicas = desired.clone();
        replicas["spec"]["replicas"] = json!(5);
        let drift = diff::drifted_fields(&desired, &replicas);
        assert!(drift.iter().all(|f| !rule.covers_field(&f.path, None)));
        let drift = diff::drifted_fields(&desired, &live);
        assert_eq!(
            stable_pointer(&drift[0].path),
            "/spec/template/spec/containers/name=web/image"
        );
        assert!(
            PathPattern::parse(&stable_pointer(&drift[0].path))
                .unwrap()
                .covers(&drift[0].path)
        );
    }

    #[test]
    fn a_path_into_an_unkeyed_list_covers_the_list_for_drift_and_apply() {
        let text = RULE.replace(
            "/spec/template/spec/containers/name=web/image",
            "/spec/template/spec/containers/name=web/args/1",
        );
        let rule = IgnoreRule::parse(&doc(&text), &clusters()).unwrap();
        let mut desired = web("nginx:1", json!([]));
        desired["spec"]["template"]["spec"]["containers"][1]["args"] = json!(["-a", "-b"]);
        let mut live = desired.clone();
        live["spec"]["template"]["spec"]["containers"][1]["args"] = json!(["-a", "-c"]);
        live["metadata"]["managedFields"] = json!([{"manager": "kubectl-edit", "operation": "Update",
            "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:args": {}}}}}}}}]);
        let drift = diff::drifted_fields(&desired, &live);
        assert_eq!(drift.len(), 1);
        assert_eq!(drift[0].pointer(), "/spec/template/spec/containers/1/args");
        assert!(is_ignored(&[&rule], &live, &drift[0].path, "flotilla"));
        let adjusted = adjust_intent(&desired, Some(&live), &[&rule], "flotilla");
        assert!(
            adjusted["spec"]["template"]["spec"]["containers"][1]
                .get("args")
                .is_none()
        );
        // A path elsewhere does not reach into the list.
        let other = RULE.replace(
            "/spec/template/spec/containers/name=web/image",
            "/spec/template/spec/containers/name=web/env/0",
        );
        let other = IgnoreRule::parse(&doc(&other), &clusters()).unwrap();
        assert!(!is_ignored(&[&other], &live, &drift[0].path, "flotilla"));
        // A missing keyed item is drift of the whole list, which a rule for another item of
        // that list does not hide.
        let mut gone = desired.clone();
        gone["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .remove(0);
        let drift = diff::drifted_fields(&desired, &gone);
        assert_eq!(drift[0].pointer(), "/spec/template/spec/containers");
        let image_rule = IgnoreRule::parse(&doc(RULE), &clusters()).unwrap();
        assert!(!is_ignored(
            &[&image_rule],
            &gone,
            &drift[0].path,
            "flotilla"
        ));
    }

    #[test]
    fn bad_rules_name_the_field_and_the_fix() {
        let cases = [
            (
                "  paths: [spec/replicas]\n",
                "spec.paths[0]",
                "must start with `/`",
            ),
            ("  paths: []\n", "spec.paths", "at least one path"),
            (
                "  clusters: [nowhere]\n  paths: [/a]\n",
                "spec.clusters[0]",
                "no cluster named nowhere",
            ),
            (
                "  paths: [/a]\n  color: red\n",
                "spec.color",
                "unknown field",
            ),
            ("  paths: [/a~2]\n", "spec.paths[0]", "`~` must be followed"),
        ];
        for (tail, field, message) in cases {
            let text = format!(
                "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {{name: r}}\nspec:\n  resources: [{{kind: Deployment, name: web}}]\n{tail}"
            );
            let err = IgnoreRule::parse(&doc(&text), &clusters()).unwrap_err();
            assert_eq!(err.field, field, "{err}");
            assert!(err.message.contains(message), "{err}");
            assert!(err.location.line > 1, "{err}");
        }
        let no_resources = "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {name: r}\nspec: {paths: [/a]}\n";
        let err = IgnoreRule::parse(&doc(no_resources), &clusters()).unwrap_err();
        assert_eq!(err.field, "spec.resources");
    }

    #[test]
    fn apply_drops_a_field_another_manager_owns_and_keeps_the_live_value_of_its_own() {
        let rule = rule();
        let desired = web("nginx:1", json!([]));
        // kubectl took the image: flotilla leaves it out of the intent.
        let taken = web(
            "nginx:2",
            json!([{"manager": "flotilla", "operation": "Apply", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                   {"manager": "kubectl-set", "operation": "Update", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}}]),
        );
        let adjusted = adjust_intent(&desired, Some(&taken), &[&rule], "flotilla");
        let web_container = &adjusted["spec"]["template"]["spec"]["containers"][1];
        assert_eq!(web_container["name"], "web");
        assert!(web_container.get("image").is_none(), "{adjusted}");
        assert_eq!(
            adjusted["spec"]["template"]["spec"]["containers"][0]["image"],
            "envoy"
        );
        // Only flotilla owns it: the live value is kept, so the server resets nothing.
        let own = web(
            "nginx:3",
            json!([{"manager": "flotilla", "operation": "Apply", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}}]),
        );
        let adjusted = adjust_intent(&desired, Some(&own), &[&rule], "flotilla");
        assert_eq!(
            adjusted["spec"]["template"]["spec"]["containers"][1]["image"],
            "nginx:3"
        );
        // A new object is created as desired.
        assert_eq!(adjust_intent(&desired, None, &[&rule], "flotilla"), desired);
    }

    #[test]
    fn a_manager_limited_rule_only_ignores_that_managers_changes() {
        let mut rule = rule();
        rule.managers = vec!["hpa-*".into()];
        let desired = web("nginx:1", json!([]));
        let live = web(
            "nginx:2",
            json!([{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}}}}}]),
        );
        let drift = diff::drifted_fields(&desired, &live);
        assert!(!is_ignored(&[&rule], &live, &drift[0].path, "flotilla"));
        rule.managers = vec!["kube*".into()];
        assert!(is_ignored(&[&rule], &live, &drift[0].path, "flotilla"));
    }
}
