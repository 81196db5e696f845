//! Generators of hostile input: strings built from the characters that break parsers, JSON
//! values shaped like Kubernetes objects, YAML-ish texts (block and flow style, anchors,
//! aliases, tags, document markers, long lines), and line-level mutations of real fleet
//! files. Every generator is bounded in depth and size so a case never needs unbounded
//! memory or time.

use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Map, Value};

/// Pieces that break hand-written parsers: YAML indicators, JSON-pointer escapes, selector
/// operators, quotes, control characters, line breaks of every kind, non-ASCII letters whose
/// case mapping changes their length, and scalars YAML reads as something other than text.
pub const NASTY: &[&str] = &[
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    ":",
    ": ",
    "- ",
    "-",
    "#",
    " #",
    "&a ",
    "*a",
    "!",
    "!!str ",
    "!x ",
    "|",
    ">",
    "'",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    "?",
    "? ",
    "%",
    "@",
    "`",
    "~",
    "~0",
    "~1",
    "~2",
    "/",
    "//",
    "---",
    "...",
    "=",
    "!=",
    "==",
    "(",
    ")",
    " in ",
    " notin ",
    " IN ",
    "*",
    "-l",
    "-l ",
    " for ",
    "s",
    "\u{feff}",
    "\u{0}",
    "\u{7}",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{200b}",
    "é",
    "İ",
    "ß",
    "ﬃ",
    "🚀",
    "\u{10ffff}",
    "0",
    "00",
    "01",
    "+1",
    "-1",
    "1.5",
    "1e400",
    "-0",
    "2147483648",
    "9223372036854775808",
    "99999999999999999999999",
    "0x1F",
    "0o17",
    ".nan",
    ".inf",
    "null",
    "true",
    "y",
    "on",
    "<<",
    "a",
    "env",
    "prod",
    "region",
    "name",
    "spec",
    "metadata",
    "containers",
    "x",
];

/// One of `items`.
pub fn pick(items: &'static [&'static str]) -> impl Strategy<Value = &'static str> + Clone {
    select(items)
}

/// A string from the hostile pieces, a plain identifier, or anything at all.
pub fn nasty_string() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        5 => prop::collection::vec(select(NASTY), 0..8).prop_map(|parts| parts.concat()),
        3 => "[a-z0-9][a-z0-9./_-]{0,12}",
        1 => any::<String>(),
        1 => "\\PC{0,16}",
    ]
}

/// Map keys a fleet file uses, so generated objects reach the code behind them.
pub const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "status",
    "replicas",
    "template",
    "containers",
    "initContainers",
    "image",
    "command",
    "args",
    "ports",
    "containerPort",
    "protocol",
    "env",
    "value",
    "values",
    "volumes",
    "volumeMounts",
    "mountPath",
    "managedFields",
    "fieldsV1",
    "manager",
    "operation",
    "time",
    "f:spec",
    "f:replicas",
    "k:{\"name\":\"a\"}",
    "resourceVersion",
    "uid",
    "generation",
    "placement",
    "clusterAffinity",
    "clusterAffinities",
    "clusterNames",
    "exclude",
    "labelSelector",
    "fieldSelector",
    "matchLabels",
    "matchExpressions",
    "key",
    "operator",
    "effect",
    "clusterTolerations",
    "tolerations",
    "tolerationSeconds",
    "replicaScheduling",
    "replicaSchedulingType",
    "replicaDivisionPreference",
    "weightPreference",
    "staticWeightList",
    "targetCluster",
    "weight",
    "spreadConstraints",
    "spreadByField",
    "spreadByLabel",
    "minGroups",
    "maxGroups",
    "resourceSelectors",
    "overrideRules",
    "overriders",
    "plaintext",
    "imageOverrider",
    "labelsOverrider",
    "annotationsOverrider",
    "commandOverrider",
    "argsOverrider",
    "fieldOverrider",
    "component",
    "path",
    "subPath",
    "op",
    "overrides",
    "clusterName",
    "clusterOverrides",
    "clusters",
    "clusterSelector",
    "taints",
    "provider",
    "region",
    "zones",
    "syncMode",
    "predicates",
    "requiredClusterSelector",
    "claimSelector",
    "celSelector",
    "celExpressions",
    "numberOfClusters",
    "clusterSets",
    "rules",
    "paths",
    "group",
    "names",
    "scope",
    "type",
    "targetType",
    "federatedType",
    "propagation",
    "totalReplicas",
    "minReplicas",
    "maxReplicas",
    "rebalance",
];

/// The apiVersion/kind pairs the loader classifies, plus a few it must reject.
pub const KINDS: &[(&str, &str)] = &[
    ("cluster.karmada.io/v1alpha1", "Cluster"),
    ("policy.karmada.io/v1alpha1", "PropagationPolicy"),
    ("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy"),
    ("policy.karmada.io/v1alpha1", "OverridePolicy"),
    ("policy.karmada.io/v1alpha1", "ClusterOverridePolicy"),
    ("core.kubefed.io/v1beta1", "KubeFedCluster"),
    ("core.kubefed.io/v1beta1", "FederatedTypeConfig"),
    ("types.kubefed.io/v1beta1", "FederatedDeployment"),
    ("types.kubefed.io/v1beta1", "FederatedNamespace"),
    ("types.kubefed.io/v1beta1", "FederatedConfigMap"),
    (
        "scheduling.kubefed.io/v1alpha1",
        "ReplicaSchedulingPreference",
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("flotilla.dev/v1alpha1", "DriftIgnore"),
    ("flotilla.dev/v1alpha1", "Bogus"),
    ("apps/v1", "Deployment"),
    ("v1", "Namespace"),
    ("v1", "ConfigMap"),
    ("example.com/v1", "Widget"),
    ("", "Deployment"),
    ("apps/v1", ""),
];

pub fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        3 => select(KEYS).prop_map(str::to_string),
        1 => nasty_string(),
    ]
}

/// A JSON scalar, hostile in every type: huge and negative numbers, floats, odd strings.
pub fn json_leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => prop_oneof![
            -5i64..50,
            Just(i64::MIN),
            Just(i64::MAX),
            Just(i64::from(i32::MAX) + 1),
            any::<i64>()
        ]
        .prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => prop::num::f64::NORMAL.prop_map(Value::from),
        4 => nasty_string().prop_map(Value::String),
    ]
}

/// A JSON value at most `depth` containers deep, with Kubernetes-ish keys.
pub fn json_value(depth: u32) -> BoxedStrategy<Value> {
    json_leaf()
        .prop_recursive(depth, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
        .boxed()
}

/// A JSON object (the root of a Kubernetes object is always one).
pub fn json_object(depth: u32) -> BoxedStrategy<Value> {
    prop::collection::vec((key(), json_value(depth)), 0..8)
        .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>()))
        .boxed()
}

/// A Kubernetes-shaped document: a known (or rejected) apiVersion and kind, a name and
/// namespace from a small pool (so duplicates happen), labels, and a random spec.
pub fn kube_object() -> BoxedStrategy<Value> {
    (
        select(KINDS),
        prop_oneof![
            pick(&["a", "b", "web", "ns", ""]).prop_map(str::to_string),
            nasty_string()
        ],
        prop::option::of(pick(&["ns", "default", "shop", ""])),
        json_value(2),
        json_value(4),
    )
        .prop_map(|((api_version, kind), name, namespace, labels, spec)| {
            let mut metadata = Map::new();
            metadata.insert("name".into(), Value::String(name));
            if let Some(ns) = namespace {
                metadata.insert("namespace".into(), Value::String(ns.into()));
            }
            metadata.insert("labels".into(), labels);
            let mut object = Map::new();
            object.insert("apiVersion".into(), Value::String(api_version.into()));
            object.insert("kind".into(), Value::String(kind.into()));
            object.insert("metadata".into(), Value::Object(metadata));
            object.insert("spec".into(), spec);
            Value::Object(object)
        })
        .boxed()
}

/// A YAML node to be written out in block or flow style.
#[derive(Debug, Clone)]
pub enum Y {
    Scalar(String),
    Map(Vec<(String, Y)>),
    Seq(Vec<Y>),
    /// The node written in flow style (`{a: 1}`, `[a, b]`).
    Flow(Box<Y>),
    /// `&name node`.
    Anchor(String, Box<Y>),
    /// `*name`.
    Alias(String),
    /// `!tag node`.
    Tag(String, Box<Y>),
}

/// Scalars as they appear in YAML text: plain, quoted with escapes (valid and not), block
/// literals, numbers beyond every integer type, and one very long line.
pub fn yaml_scalar() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        4 => "[a-z][a-z0-9.-]{0,10}",
        2 => select(NASTY).prop_map(str::to_string),
        1 => nasty_string().prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
        1 => pick(&[
            "\"\\x00\\xff\\u00e9\\U0001F680\"",
            "\"\\uD800\"",
            "\"\\z\"",
            "\"unterminated",
            "'it''s'",
            "'unterminated",
            "|\n  line one\n  line two\n",
            ">-\n  folded\n  text\n",
            "|9\n x\n",
            "123456789012345678901234567890",
            "-9223372036854775809",
            "18446744073709551616",
            "1e309",
            "-.inf",
            ".NaN",
            "0b101",
            "1_000",
            "2024-01-01T00:00:00Z",
            "~",
            "!!binary aGVsbG8=",
            "!!int x",
            "!!float y",
            "!!map []",
        ])
        .prop_map(str::to_string),
        1 => (1usize..30_000).prop_map(|n| "x".repeat(n)),
    ]
}

pub fn yaml_node() -> BoxedStrategy<Y> {
    let leaf = prop_oneof![
        6 => yaml_scalar().prop_map(Y::Scalar),
        1 => pick(&["a", "b", "missing"]).prop_map(|a| Y::Alias(a.to_string())),
    ];
    leaf.prop_recursive(5, 48, 5, |inner| {
        let yaml_key = prop_oneof![
            4 => select(KEYS).prop_map(str::to_string),
            1 => pick(&["a", "a", "<<", "? x", "1", "true", "null", "\"q\"", "[k]", "{k: v}"])
                .prop_map(str::to_string),
            1 => nasty_string(),
        ];
        prop_oneof![
            4 => prop::collection::vec((yaml_key, inner.clone()), 0..5).prop_map(Y::Map),
            3 => prop::collection::vec(inner.clone(), 0..5).prop_map(Y::Seq),
            1 => inner.clone().prop_map(|y| Y::Flow(Box::new(y))),
            1 => (pick(&["a", "b"]), inner.clone())
                .prop_map(|(name, y)| Y::Anchor(name.to_string(), Box::new(y))),
            1 => (pick(&["!!map", "!!seq", "!!str", "!x", "!<tag:x>"]), inner)
                .prop_map(|(tag, y)| Y::Tag(tag.to_string(), Box::new(y))),
        ]
    })
    .boxed()
}

impl Y {
    /// The node as a flow-style value.
    pub fn flow(&self) -> String {
        match self {
            Y::Scalar(s) => s.replace('\n', " "),
            Y::Map(entries) => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.flow()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Y::Seq(items) => {
                let items: Vec<String> = items.iter().map(Y::flow).collect();
                format!("[{}]", items.join(", "))
            }
            Y::Flow(inner) => inner.flow(),
            Y::Anchor(name, inner) => format!("&{name} {}", inner.flow()),
            Y::Alias(name) => format!("*{name}"),
            Y::Tag(tag, inner) => format!("{tag} {}", inner.flow()),
        }
    }

    fn inline(&self) -> Option<String> {
        match self {
            Y::Scalar(s) => Some(s.clone()),
            Y::Flow(inner) => Some(inner.flow()),
            Y::Alias(name) => Some(format!("*{name}")),
            Y::Map(e) if e.is_empty() => Some("{}".into()),
            Y::Seq(s) if s.is_empty() => Some("[]".into()),
            _ => None,
        }
    }

    /// Writes the node in block style at `indent`, after a `key:` or `- ` that is already
    /// written (`prefix` carries an anchor or tag for the node).
    fn block_value(&self, indent: usize, prefix: &str, out: &mut String) {
        match self {
            Y::Anchor(name, inner) => inner.block_value(indent, &format!("{prefix}&{name} "), out),
            Y::Tag(tag, inner) => inner.block_value(indent, &format!("{prefix}{tag} "), out),
            other => match other.inline() {
                Some(text) => {
                    out.push(' ');
                    out.push_str(prefix);
                    out.push_str(&text);
                    out.push('\n');
                }
                None => {
                    if !prefix.is_empty() {
                        out.push(' ');
                        out.push_str(prefix.trim_end());
                    }
                    out.push('\n');
                    other.block(indent + 2, out);
                }
            },
        }
    }

    /// Writes the node in block style, every line indented by `indent`.
    pub fn block(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self {
            Y::Map(entries) if !entries.is_empty() => {
                for (k, v) in entries {
                    out.push_str(&pad);
                    out.push_str(k);
                    out.push(':');
                    v.block_value(indent, "", out);
                }
            }
            Y::Seq(items) if !items.is_empty() => {
                for item in items {
                    out.push_str(&pad);
                    out.push('-');
                    item.block_value(indent, "", out);
                }
            }
            other => {
                out.push_str(&pad);
                match other.inline() {
                    Some(text) => out.push_str(&text),
                    None => out.push_str(&other.flow()),
                }
                out.push('\n');
            }
        }
    }
}

/// Separators between documents: markers with comments, tags and directives, end markers.
pub const MARKERS: &[&str] = &[
    "---\n",
    "---\n",
    "--- # next\n",
    "...\n---\n",
    "...\n",
    "--- !x\n",
    "%YAML 1.2\n---\n",
    "---\r\n",
    "\n",
    "# only a comment\n---\n",
    "--- |\n  text\n",
    "---  \n",
];

/// A YAML-ish file: documents in block or flow style joined by random markers.
pub fn yaml_text() -> impl Strategy<Value = String> {
    prop::collection::vec((yaml_node(), select(MARKERS), any::<bool>()), 1..4).prop_map(|docs| {
        let mut text = String::new();
        for (node, marker, flow) in docs {
            text.push_str(marker);
            if flow {
                text.push_str(&node.flow());
                text.push('\n');
            } else {
                node.block(0, &mut text);
            }
        }
        text
    })
}

/// One line-level change to a file.
#[derive(Debug, Clone)]
pub enum LineEdit {
    Delete(Index),
    Duplicate(Index),
    Swap(Index, Index),
    Indent(Index),
    Dedent(Index),
    /// Insert a hostile line.
    Insert(Index, String),
    /// `key: value` gets another scalar (a string for a number, a number beyond int64, …).
    Rescalar(Index, String),
    /// `key:` with a block below becomes `key: <flow value>` and loses its block (labels as a
    /// list, a list as a string, …).
    Retype(Index, String),
    /// Cut the file at a line.
    Truncate(Index),
}

/// Values a field may be changed to: other types, out-of-range numbers, negative weights.
pub const RESCALARS: &[&str] = &[
    "\"3\"",
    "'3'",
    "three",
    "[a, b]",
    "{a: 1}",
    "[]",
    "{}",
    "~",
    "null",
    "true",
    "-1",
    "-100",
    "0",
    "2147483648",
    "-2147483649",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1e400",
    "1.5",
    "-0.0",
    ".nan",
    ".inf",
    "0x7fffffff",
    "\"\"",
    "\"/spec/replicas\"",
    "/nonexistent/path",
    "\"~2\"",
    "\"\\uD800\"",
    "*undefined",
    "&a [*a]",
    "!!binary x",
    "|\n  block",
];

pub fn line_edit() -> impl Strategy<Value = LineEdit> {
    let i = any::<Index>();
    prop_oneof![
        2 => i.clone().prop_map(LineEdit::Delete),
        2 => i.clone().prop_map(LineEdit::Duplicate),
        1 => (i.clone(), any::<Index>()).prop_map(|(a, b)| LineEdit::Swap(a, b)),
        1 => i.clone().prop_map(LineEdit::Indent),
        1 => i.clone().prop_map(LineEdit::Dedent),
        1 => (i.clone(), nasty_string()).prop_map(|(a, s)| LineEdit::Insert(a, s)),
        5 => (i.clone(), prop_oneof![select(RESCALARS).prop_map(str::to_string), yaml_scalar()])
            .prop_map(|(a, s)| LineEdit::Rescalar(a, s)),
        2 => (i.clone(), select(RESCALARS)).prop_map(|(a, s)| LineEdit::Retype(a, s.to_string())),
        1 => i.prop_map(LineEdit::Truncate),
    ]
}

/// A few edits, each aimed at one file of a set.
pub fn file_edits() -> impl Strategy<Value = Vec<(Index, LineEdit)>> {
    prop::collection::vec((any::<Index>(), line_edit()), 1..6)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `key: value` (optionally after `- `) → byte offset where the value starts.
fn value_start(line: &str) -> Option<usize> {
    let body = line.trim_start_matches([' ', '-']);
    let at = body.find(": ")?;
    let key = &body[..at];
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./\"'".contains(c));
    simple.then(|| line.len() - body.len() + at + 2)
}

/// Applies one edit to a text (lines are kept with their endings).
pub fn apply_line_edit(text: &str, edit: &LineEdit) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let n = lines.len();
    match edit {
        LineEdit::Delete(i) => {
            lines.remove(i.index(n));
        }
        LineEdit::Duplicate(i) => {
            let at = i.index(n);
            let copy = lines[at].clone();
            lines.insert(at, copy);
        }
        LineEdit::Swap(a, b) => lines.swap(a.index(n), b.index(n)),
        LineEdit::Indent(i) => lines[i.index(n)].insert_str(0, "  "),
        LineEdit::Dedent(i) => {
            let line = &mut lines[i.index(n)];
            let cut = indent_of(line).min(2);
            line.drain(..cut);
        }
        LineEdit::Insert(i, s) => lines.insert(i.index(n), format!("{s}\n")),
        LineEdit::Rescalar(i, value) => {
            // Aim at the first `key: value` line at or after the index.
            let start = i.index(n);
            if let Some(at) = (start..n)
                .chain(0..start)
                .find(|&k| value_start(&lines[k]).is_some())
            {
                let line = &lines[at];
                let cut = value_start(line).unwrap_or(line.len());
                let ending = if line.ends_with("\r\n") {
                    "\r\n"
                } else if line.ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                lines[at] = format!("{}{value}{ending}", &line[..cut]);
            }
        }
        LineEdit::Retype(i, value) => {
            let start = i.index(n);
            let parent = (start..n).chain(0..start).find(|&k| {
                let t = lines[k].trim_end();
                t.ends_with(':') && !t.trim_start().starts_with('#')
            });
            if let Some(at) = parent {
                let indent = indent_of(&lines[at]);
                let mut end = at + 1;
                while end < n && (lines[end].trim().is_empty() || indent_of(&lines[end]) > indent) {
                    end += 1;
                }
                let head = lines[at].trim_end().to_string();
                lines.splice(at..end, [format!("{head} {value}\n")]);
            }
        }
        LineEdit::Truncate(i) => lines.truncate(i.index(n)),
    }
    lines.concat()
}

/// Characters of text in the YAML alphabet (printable ASCII, tabs and newlines).
pub fn yaml_alphabet_text() -> impl Strategy<Value = String> {
    "[ -~\t\n]{0,400}"
}

/// Raw bytes read the way a fleet directory reader would hand them over (lossily).
pub fn lossy_bytes() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 0..400)
        .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}
