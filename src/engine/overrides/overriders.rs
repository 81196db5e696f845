//! Karmada's overriders (image, command, args, labels, annotations, field, plaintext): parsing
//! one `overriders` block with located errors and applying it to one object in upstream's
//! order. It must not decide which policies or rules apply to which cluster.

use serde_json::{Map, Value};

use crate::engine::document::parse::{Doc, escape_token, pointer_to_field};
use crate::engine::document::secret_values;
use crate::engine::document::source::FleetError;
use crate::engine::overrides::patch::{OpKind, PatchOp};
use crate::engine::place::selector::scalar_text;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageComponent {
    Registry,
    Repository,
    Tag,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImageOverrider {
    pub component: ImageComponent,
    pub operator: OpKind,
    pub value: String,
    pub predicate: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommandArgsOverrider {
    pub container: String,
    /// Only add or remove.
    pub operator: OpKind,
    pub value: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapOverrider {
    pub operator: OpKind,
    pub value: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubFormat {
    Json,
    Yaml,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FieldOverrider {
    pub field_path: String,
    pub format: SubFormat,
    pub ops: Vec<PatchOp>,
}

/// One overrider with the field it was written at, for errors and explain.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub field: String,
    pub line: usize,
    pub item: T,
}

/// One `overriders` block, in upstream's application order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overriders {
    pub image: Vec<Located<ImageOverrider>>,
    pub command: Vec<Located<CommandArgsOverrider>>,
    pub args: Vec<Located<CommandArgsOverrider>>,
    pub labels: Vec<Located<MapOverrider>>,
    pub annotations: Vec<Located<MapOverrider>>,
    pub field: Vec<Located<FieldOverrider>>,
    pub plaintext: Vec<Located<PatchOp>>,
}

/// A failed overrider: which one, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideFailure {
    pub field: String,
    pub line: usize,
    pub message: String,
}

const KNOWN: [&str; 7] = [
    "imageOverrider",
    "commandOverrider",
    "argsOverrider",
    "labelsOverrider",
    "annotationsOverrider",
    "fieldOverrider",
    "plaintext",
];

fn list<'a>(doc: &'a Doc, pointer: &str) -> Result<&'a [Value], FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(doc.error(
            pointer,
            "must be a list",
            "write it as a YAML list (`- ...`)",
        )),
    }
}

fn operator(doc: &Doc, pointer: &str, allowed: &[OpKind]) -> Result<OpKind, FleetError> {
    let text = doc
        .value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = match text {
        "add" => Some(OpKind::Add),
        "remove" => Some(OpKind::Remove),
        "replace" => Some(OpKind::Replace),
        _ => None,
    };
    let names: Vec<&str> = allowed.iter().map(|k| k.as_str()).collect();
    match kind {
        Some(k) if allowed.contains(&k) => Ok(k),
        _ => Err(doc.error(
            pointer,
            format!(
                "unknown override operator `{}`",
                if text.is_empty() { "(empty)" } else { text }
            ),
            format!("use {}", names.join(" or ")),
        )),
    }
}

fn located<T>(doc: &Doc, pointer: &str, item: T) -> Located<T> {
    Located {
        field: pointer_to_field(pointer),
        line: doc.line_of(pointer),
        item,
    }
}

impl Overriders {
    /// Parses the `overriders` mapping at `pointer`.
    pub fn parse(doc: &Doc, pointer: &str) -> Result<Overriders, FleetError> {
        let mut out = Overriders::default();
        let Some(block) = doc.value.pointer(pointer) else {
            return Ok(out);
        };
        let Some(obj) = block.as_object() else {
            return Err(doc.error(
                pointer,
                "overriders must be a mapping",
                format!("use {}", KNOWN.join(", ")),
            ));
        };
        for key in obj.keys() {
            if !KNOWN.contains(&key.as_str()) {
                return Err(doc.error(
                    &format!("{pointer}/{}", escape_token(key)),
                    format!("unknown overrider `{key}`"),
                    format!("use one of {}", KNOWN.join(", ")),
                ));
            }
        }
        let all = [OpKind::Add, OpKind::Remove, OpKind::Replace];
        let p = format!("{pointer}/imageOverrider");
        for (i, item) in list(doc, &p)?.iter().enumerate() {
            let ip = format!("{p}/{i}");
            let component = match item.get("component").and_then(Value::as_str).unwrap_or("") {
                "Registry" => ImageComponent::Registry,
                "Repository" => ImageComponent::Repository,
                "Tag" => ImageComponent::Tag,
                other => {
                    return Err(doc.error(
                        &format!("{ip}/component"),
                        format!("unknown image component `{other}`"),
                        "use Registry, Repository or Tag",
                    ));
                }
            };
            let operator = operator(doc, &format!("{ip}/operator"), &all)?;
            let value = item.get("value").and_then(scalar_text).unwrap_or_default();
            if operator != OpKind::Remove && value.is_empty() {
                return Err(doc.error(
                    &ip,
                    "imageOverrider needs a `value` for add and replace",
                    "add `value: registry.example.com` (or whatever the component needs)",
                ));
            }
            let predicate = match item.get("predicate") {
                None | Some(Value::Null) => None,
                Some(pred) => match pred.get("path").and_then(Value::as_str) {
                    Some(path) if path.starts_with('/') => Some(path.to_string()),
                    _ => {
                        return Err(doc.error(
                            &format!("{ip}/predicate/path"),
                            "predicate.path must be a JSON pointer to an image string",
                            "write e.g. `predicate: {path: /spec/template/spec/containers/0/image}`",
                        ));
                    }
                },
            };
            out.image.push(located(
                doc,
                &ip,
                ImageOverrider {
                    component,
                    operator,
                    value,
                    predicate,
                },
            ));
        }
        for (key, target) in [("commandOverrider", 0), ("argsOverrider", 1)] {
            let p = format!("{pointer}/{key}");
            for (i, item) in list(doc, &p)?.iter().enumerate() {
                let ip = format!("{p}/{i}");
                let container = item
                    .get("containerName")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if container.is_empty() {
                    return Err(doc.error(
                        &format!("{ip}/containerName"),
                        format!("{key} needs a containerName"),
                        "add `containerName: <name of the container>`",
                    ));
                }
                let operator = operator(
                    doc,
                    &format!("{ip}/operator"),
                    &[OpKind::Add, OpKind::Remove],
                )?;
                let value = match item.get("value") {
                    Some(Value::Array(vals)) => vals.iter().filter_map(scalar_text).collect(),
                    None | Some(Value::Null) => Vec::new(),
                    Some(_) => {
                        return Err(doc.error(
                            &format!("{ip}/value"),
                            "value must be a list of strings",
                            "write `value: [\"--flag\"]`",
                        ));
                    }
                };
                let entry = located(
                    doc,
                    &ip,
                    CommandArgsOverrider {
                        container,
                        operator,
                        value,
                    },
                );
                if target == 0 {
                    out.command.push(entry);
                } else {
                    out.args.push(entry);
                }
            }
        }
        for (key, target) in [("labelsOverrider", 0), ("annotationsOverrider", 1)] {
            let p = format!("{pointer}/{key}");
            for (i, item) in list(doc, &p)?.iter().enumerate() {
                let ip = format!("{p}/{i}");
                let operator = operator(doc, &format!("{ip}/operator"), &all)?;
                let value = match item.get("value") {
                    Some(Value::Object(map)) => map
                        .iter()
                        .map(|(k, v)| (k.clone(), scalar_text(v).unwrap_or_default()))
                        .collect(),
                    _ => {
                        return Err(doc.error(
                            &format!("{ip}/value"),
                            format!("{key} needs a `value` mapping"),
                            "write `value: {team: shop}`",
                        ));
                    }
                };
                let entry = located(doc, &ip, MapOverrider { operator, value });
                if target == 0 {
                    out.labels.push(entry);
                } else {
                    out.annotations.push(entry);
                }
            }
        }
        let p = format!("{pointer}/fieldOverrider");
        for (i, item) in list(doc, &p)?.iter().enumerate() {
            let ip = format!("{p}/{i}");
            let field_path = item.get("fieldPath").and_then(Value::as_str).unwrap_or("");
            if !field_path.starts_with('/') {
                return Err(doc.error(
                    &format!("{ip}/fieldPath"),
                    "fieldPath must be a JSON pointer to a string field",
                    "write e.g. `fieldPath: /data/config.yaml`",
                ));
            }
            let (format, key) = match (item.get("json"), item.get("yaml")) {
                (Some(_), None) => (SubFormat::Json, "json"),
                (None, Some(_)) => (SubFormat::Yaml, "yaml"),
                _ => {
                    return Err(doc.error(
                        &ip,
                        "a fieldOverrider needs exactly one of `json` or `yaml`",
                        "add `yaml: [{subPath: /a, operator: replace, value: b}]`",
                    ));
                }
            };
            let lp = format!("{ip}/{key}");
            let mut ops = Vec::new();
            for j in 0..list(doc, &lp)?.len() {
                ops.push(PatchOp::parse(
                    doc,
                    &format!("{lp}/{j}"),
                    "operator",
                    "subPath",
                    false,
                )?);
            }
            out.field.push(located(
                doc,
                &ip,
                FieldOverrider {
                    field_path: field_path.to_string(),
                    format,
                    ops,
                },
            ));
        }
        let p = format!("{pointer}/plaintext");
        for i in 0..list(doc, &p)?.len() {
            let ip = format!("{p}/{i}");
            let op = PatchOp::parse(doc, &ip, "operator", "path", false)?;
            out.plaintext.push(located(doc, &format!("{ip}/path"), op));
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.image.is_empty()
            && self.command.is_empty()
            && self.args.is_empty()
            && self.labels.is_empty()
            && self.annotations.is_empty()
            && self.field.is_empty()
            && self.plaintext.is_empty()
    }

    /// Applies the block to `obj` in upstream's order. With `trace`, one line per overrider
    /// says what it changed.
    pub fn apply(
        &self,
        obj: &mut Value,
        mut trace: Option<&mut Vec<String>>,
    ) -> Result<(), OverrideFailure> {
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // What an overrider writes into a Secret's values is traced masked.
        let secret = secret_values::is_secret(obj);
        for o in &self.image {
            let paths = match &o.item.predicate {
                Some(p) => vec![p.clone()],
                None => builtin_image_paths(obj, &kind),
            };
            if paths.is_empty()
                && let Some(t) = trace.as_deref_mut()
            {
                t.push(format!(
                    "{}: no built-in image paths for kind {kind} and no predicate; nothing changed",
                    o.field
                ));
            }
            for path in paths {
                let current = obj
                    .pointer(&path)
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        fail(
                            o,
                            format!(
                                "image path {path} does not exist in the object or is not a string"
                            ),
                        )
                    })?
                    .to_string();
                let updated = override_image(&current, &o.item);
                if let Some(slot) = obj.pointer_mut(&path) {
                    *slot = Value::String(updated.clone());
                }
                if let Some(t) = trace.as_deref_mut() {
                    t.push(format!(
                        "{}: imageOverrider {:?} {} at {path}: {current} -> {updated}",
                        o.field,
                        o.item.component,
                        o.item.operator.as_str()
                    ));
                }
            }
        }
        for (list, what) in [(&self.command, "command"), (&self.args, "args")] {
            for o in list {
                let changed = apply_command_args(obj, &kind, what, &o.item);
                if let Some(t) = trace.as_deref_mut() {
                    match changed {
                        Some(path) => t.push(format!(
                            "{}: {what}Overrider {} {:?} on container {} at {path}",
                            o.field,
                            o.item.operator.as_str(),
                            o.item.value,
                            o.item.container
                        )),
                        None => t.push(format!(
                            "{}: {what}Overrider found no container named {} in a {kind}; nothing changed",
                            o.field, o.item.container
                        )),
                    }
                }
            }
        }
        for (list, what) in [(&self.labels, "labels"), (&self.annotations, "annotations")] {
            for o in list {
                apply_map(obj, what, &o.item);
                if let Some(t) = trace.as_deref_mut() {
                    let keys: Vec<&str> = o.item.value.iter().map(|(k, _)| k.as_str()).collect();
                    t.push(format!(
                        "{}: {what}Overrider {} {} at /metadata/{what}",
                        o.field,
                        o.item.operator.as_str(),
                        keys.join(",")
                    ));
                }
            }
        }
        for o in &self.field {
            apply_field(obj, &o.item).map_err(|m| fail(o, m))?;
            if let Some(t) = trace.as_deref_mut() {
                let inside = secret && secret_values::is_value_pointer(&o.item.field_path);
                let ops: Vec<String> = o.item.ops.iter().map(|op| op.masked_if(inside)).collect();
                t.push(format!(
                    "{}: fieldOverrider {} at {}: {}",
                    o.field,
                    if o.item.format == SubFormat::Json {
                        "json"
                    } else {
                        "yaml"
                    },
                    o.item.field_path,
                    ops.join("; ")
                ));
            }
        }
        for o in &self.plaintext {
            o.item.apply(obj).map_err(|m| fail(o, m))?;
            if let Some(t) = trace.as_deref_mut() {
                t.push(format!("{}: plaintext {}", o.field, o.item.shown(secret)));
            }
        }
        Ok(())
    }
}

fn fail<T>(o: &Located<T>, message: String) -> OverrideFailure {
    OverrideFailure {
        field: o.field.clone(),
        line: o.line,
        message,
    }
}

/// Image paths upstream rewrites when an imageOverrider has no predicate.
fn builtin_image_paths(obj: &Value, kind: &str) -> Vec<String> {
    let prefix = match kind {
        "Pod" => "/spec",
        "ReplicaSet" | "Deployment" | "DaemonSet" | "StatefulSet" | "Job" => "/spec/template/spec",
        _ => return Vec::new(),
    };
    let count = obj
        .pointer(&format!("{prefix}/containers"))
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    (0..count)
        .map(|i| format!("{prefix}/containers/{i}/image"))
        .collect()
}

/// An image reference split as upstream's parser does: `[host/]repository[:tag|@digest]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub host: String,
    pub repository: String,
    pub tag: String,
    pub digest: String,
}

impl ImageRef {
    pub fn parse(image: &str) -> ImageRef {
        let (name, digest) = match image.split_once('@') {
            Some((n, d)) => (n, d.to_string()),
            None => (image, String::new()),
        };
        let (host, rest) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_string(), rest)
            }
            _ => (String::new(), name),
        };
        let last_slash = rest.rfind('/').map(|p| p + 1).unwrap_or(0);
        let (repository, tag) = match rest[last_slash..].rfind(':') {
            Some(colon) => {
                let at = last_slash + colon;
                (rest[..at].to_string(), rest[at + 1..].to_string())
            }
            None => (rest.to_string(), String::new()),
        };
        ImageRef {
            host,
            repository,
            tag,
            digest,
        }
    }

    fn tag_or_digest(&self) -> String {
        if self.digest.is_empty() {
            self.tag.clone()
        } else {
            self.digest.clone()
        }
    }

    fn set_tag_or_digest(&mut self, value: String) {
        if value.contains(':') {
            self.digest = value;
            self.tag.clear();
        } else {
            self.tag = value;
            self.digest.clear();
        }
    }
}

impl std::fmt::Display for ImageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.host.is_empty() {
            write!(f, "{}/", self.host)?;
        }
        f.write_str(&self.repository)?;
        if !self.digest.is_empty() {
            write!(f, "@{}", self.digest)
        } else if !self.tag.is_empty() {
            write!(f, ":{}", self.tag)
        } else {
            Ok(())
        }
    }
}

/// Upstream's image rewrite: `add` appends the value to the component, `replace` sets it,
/// `remove` clears it.
pub fn override_image(image: &str, o: &ImageOverrider) -> String {
    let mut parts = ImageRef::parse(image);
    match (o.component, o.operator) {
        (ImageComponent::Registry, OpKind::Add) => parts.host.push_str(&o.value),
        (ImageComponent::Registry, OpKind::Replace) => parts.host = o.value.clone(),
        (ImageComponent::Registry, OpKind::Remove) => parts.host.clear(),
        (ImageComponent::Repository, OpKind::Add) => parts.repository.push_str(&o.value),
        (ImageComponent::Repository, OpKind::Replace) => parts.repository = o.value.clone(),
        (ImageComponent::Repository, OpKind::Remove) => parts.repository.clear(),
        (ImageComponent::Tag, OpKind::Add) => {
            let v = parts.tag_or_digest() + &o.value;
            parts.set_tag_or_digest(v);
        }
        (ImageComponent::Tag, OpKind::Replace) => parts.set_tag_or_digest(o.value.clone()),
        (ImageComponent::Tag, OpKind::Remove) => {
            parts.tag.clear();
            parts.digest.clear();
        }
    }
    parts.to_string()
}

fn apply_command_args(
    obj: &mut Value,
    kind: &str,
    what: &str,
    o: &CommandArgsOverrider,
) -> Option<String> {
    let prefix = match kind {
        "Pod" => "/spec/containers",
        "ReplicaSet" | "Deployment" | "DaemonSet" | "StatefulSet" => {
            "/spec/template/spec/containers"
        }
        _ => return None,
    };
    let containers = obj.pointer_mut(prefix)?.as_array_mut()?;
    let mut changed = None;
    for (idx, container) in containers.iter_mut().enumerate() {
        let Some(c) = container.as_object_mut() else {
            continue;
        };
        if c.get("name").and_then(Value::as_str) != Some(o.container.as_str()) {
            continue;
        }
        let mut current: Vec<String> = c
            .get(what)
            .and_then(Value::as_array)
            .map(|vals| vals.iter().filter_map(scalar_text).collect())
            .unwrap_or_default();
        match o.operator {
            OpKind::Add => current.extend(o.value.iter().cloned()),
            _ => current.retain(|v| !o.value.contains(v)),
        }
        c.insert(
            what.to_string(),
            Value::Array(current.into_iter().map(Value::String).collect()),
        );
        changed = Some(format!("{prefix}/{idx}/{what}"));
    }
    changed
}

fn apply_map(obj: &mut Value, what: &str, o: &MapOverrider) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let metadata = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(metadata) = metadata.as_object_mut() else {
        return;
    };
    if o.operator == OpKind::Add {
        let slot = metadata
            .entry(what)
            .or_insert_with(|| Value::Object(Map::new()));
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
    }
    let Some(map) = metadata.get_mut(what).and_then(Value::as_object_mut) else {
        return;
    };
    for (key, value) in &o.value {
        match o.operator {
            OpKind::Add => {
                map.insert(key.clone(), Value::String(value.clone()));
            }
            OpKind::Replace => {
                if let Some(slot) = map.get_mut(key) {
                    *slot = Value::String(value.clone());
                }
            }
            OpKind::Remove => {
                map.remove(key);
            }
        }
    }
}

fn apply_field(obj: &mut Value, o: &FieldOverrider) -> Result<(), String> {
    let text = obj
        .pointer(&o.field_path)
        .ok_or_else(|| format!("fieldPath {} does not exist in the object", o.field_path))?
        .as_str()
        .ok_or_else(|| format!("fieldPath {} is not a string field", o.field_path))?
        .to_string();
    let mut sub: Value = match o.format {
        SubFormat::Json => serde_json::from_str(&text)
            .map_err(|e| format!("{} does not hold valid JSON: {e}", o.field_path))?,
        SubFormat::Yaml => serde_saphyr::from_str(&text)
            .map_err(|e| format!("{} does not hold valid YAML: {e}", o.field_path))?,
    };
    for op in &o.ops {
        op.apply(&mut sub)
            .map_err(|m| format!("inside {}: {m}", o.field_path))?;
    }
    let rendered = match o.format {
        SubFormat::Json => serde_json::to_string(&sub).map_err(|e| e.to_string())?,
        SubFormat::Yaml => serde_saphyr::to_string(&sub).map_err(|e| e.to_string())?,
    };
    if let Some(slot) = obj.pointer_mut(&o.field_path) {
        *slot = Value::String(rendered);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;
    use serde_json::json;

    fn overriders(text: &str) -> Result<Overriders, FleetError> {
        let (docs, errors) = parse_files(&[SourceFile {
            path: "o.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        Overriders::parse(&docs[0], "/o")
    }

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "web", "image": "docker.io/shop/web:1.2", "args": ["--a", "--b"]},
                {"name": "side", "image": "envoy:1.30"}
            ]}}}
        })
    }

    #[test]
    fn image_parsing_table() {
        let cases = [
            ("nginx", "", "nginx", ""),
            ("nginx:1.25", "", "nginx", "1.25"),
            (
                "docker.io/library/nginx:1.25",
                "docker.io",
                "library/nginx",
                "1.25",
            ),
            ("localhost:5000/app:v1", "localhost:5000", "app", "v1"),
            ("shop/web", "", "shop/web", ""),
        ];
        for (image, host, repo, tag) in cases {
            let p = ImageRef::parse(image);
            assert_eq!(
                (p.host.as_str(), p.repository.as_str(), p.tag.as_str()),
                (host, repo, tag),
                "{image}"
            );
            assert_eq!(p.to_string(), image);
        }
        let digest = ImageRef::parse("r.io/a@sha256:abc");
        assert_eq!(digest.digest, "sha256:abc");
        assert_eq!(digest.to_string(), "r.io/a@sha256:abc");
    }

    #[test]
    fn image_overrider_component_operator_table() {
        let image = "docker.io/shop/web:1.2";
        let cases = [
            (
                ImageComponent::Registry,
                OpKind::Replace,
                "eu.registry.example",
                "eu.registry.example/shop/web:1.2",
            ),
            (
                ImageComponent::Registry,
                OpKind::Add,
                "-mirror",
                "docker.io-mirror/shop/web:1.2",
            ),
            (ImageComponent::Registry, OpKind::Remove, "", "shop/web:1.2"),
            (
                ImageComponent::Repository,
                OpKind::Replace,
                "shop/web-eu",
                "docker.io/shop/web-eu:1.2",
            ),
            (
                ImageComponent::Repository,
                OpKind::Add,
                "-edge",
                "docker.io/shop/web-edge:1.2",
            ),
            (
                ImageComponent::Repository,
                OpKind::Remove,
                "",
                "docker.io/:1.2",
            ),
            (
                ImageComponent::Tag,
                OpKind::Replace,
                "2.0",
                "docker.io/shop/web:2.0",
            ),
            (
                ImageComponent::Tag,
                OpKind::Add,
                "-eu",
                "docker.io/shop/web:1.2-eu",
            ),
            (
                ImageComponent::Tag,
                OpKind::Remove,
                "",
                "docker.io/shop/web",
            ),
        ];
        for (component, operator, value, want) in cases {
            let o = ImageOverrider {
                component,
                operator,
                value: value.into(),
                predicate: None,
            };
            assert_eq!(
                override_image(image, &o),
                want,
                "{component:?} {operator:?}"
            );
        }
    }

    #[test]
    fn image_overrider_without_predicate_rewrites_every_container() {
        let o = overriders(
            "o:\n  imageOverrider:\n  - {component: Registry, operator: replace, value: eu.io}\n",
        )
        .unwrap();
        let mut obj = deployment();
        o.apply(&mut obj, None).unwrap();
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/0/image")
                .unwrap(),
            "eu.io/shop/web:1.2"
        );
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/1/image")
                .unwrap(),
            "eu.io/envoy:1.30"
        );
    }

    #[test]
    fn image_overrider_with_predicate_touches_one_path() {
        let o = overriders("o:\n  imageOverrider:\n  - {component: Tag, operator: replace, value: '2.0', predicate: {path: /spec/template/spec/containers/1/image}}\n").unwrap();
        let mut obj = deployment();
        o.apply(&mut obj, None).unwrap();
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/0/image")
                .unwrap(),
            "docker.io/shop/web:1.2"
        );
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/1/image")
                .unwrap(),
            "envoy:2.0"
        );
        let missing = overriders("o:\n  imageOverrider:\n  - {component: Tag, operator: replace, value: x, predicate: {path: /spec/nope}}\n").unwrap();
        let err = missing.apply(&mut deployment(), None).unwrap_err();
        assert!(err.message.contains("/spec/nope"));
    }

    #[test]
    fn command_and_args_overriders() {
        let o = overriders("o:\n  argsOverrider:\n  - {containerName: web, operator: remove, value: ['--a']}\n  - {containerName: web, operator: add, value: ['--c']}\n  commandOverrider:\n  - {containerName: side, operator: add, value: [envoy, -c]}\n").unwrap();
        let mut obj = deployment();
        o.apply(&mut obj, None).unwrap();
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/0/args")
                .unwrap(),
            &json!(["--b", "--c"])
        );
        assert_eq!(
            obj.pointer("/spec/template/spec/containers/1/command")
                .unwrap(),
            &json!(["envoy", "-c"])
        );
        assert!(
            overriders(
                "o:\n  argsOverrider:\n  - {containerName: web, operator: replace, value: []}\n"
            )
            .is_err()
        );
    }

    #[test]
    fn labels_and_annotations_overriders() {
        let o = overriders("o:\n  labelsOverrider:\n  - {operator: add, value: {tier: edge}}\n  - {operator: replace, value: {app: shop, missing: x}}\n  - {operator: remove, value: {tier: ''}}\n  annotationsOverrider:\n  - {operator: add, value: {note: hi}}\n").unwrap();
        let mut obj = deployment();
        o.apply(&mut obj, None).unwrap();
        assert_eq!(
            obj.pointer("/metadata/labels").unwrap(),
            &json!({"app": "shop"})
        );
        assert_eq!(
            obj.pointer("/metadata/annotations").unwrap(),
            &json!({"note": "hi"})
        );
    }

    #[test]
    fn field_overrider_json_and_yaml() {
        let o = overriders("o:\n  fieldOverrider:\n  - fieldPath: /data/app.json\n    json: [{subPath: /db/host, operator: replace, value: db-eu}]\n  - fieldPath: /data/app.yaml\n    yaml: [{subPath: /cache, operator: add, value: {size: 2}}]\n").unwrap();
        let mut obj = json!({"kind": "ConfigMap", "data": {"app.json": "{\"db\":{\"host\":\"db\"}}", "app.yaml": "name: x\n"}});
        o.apply(&mut obj, None).unwrap();
        assert_eq!(obj["data"]["app.json"], "{\"db\":{\"host\":\"db-eu\"}}");
        let yaml: Value =
            serde_saphyr::from_str(obj["data"]["app.yaml"].as_str().unwrap()).unwrap();
        assert_eq!(yaml, json!({"name": "x", "cache": {"size": 2}}));
    }

    #[test]
    fn plaintext_and_unknown_operator() {
        let o = overriders(
            "o:\n  plaintext:\n  - {path: /spec/replicas, operator: replace, value: 1}\n",
        )
        .unwrap();
        let mut obj = deployment();
        o.apply(&mut obj, None).unwrap();
        assert_eq!(obj["spec"]["replicas"], 1);
        let err = overriders(
            "x: 1\no:\n  plaintext:\n  - path: /spec/replicas\n    operator: set\n    value: 1\n",
        )
        .unwrap_err();
        assert_eq!(err.location.line, 5);
        assert!(err.message.contains("unknown override operator `set`"));
        assert!(err.hint.contains("add"));
    }
}
