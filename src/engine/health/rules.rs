//! Which rule decides a kind's health, and the verdicts of rules cached per object. Rules come
//! in layers, searched in order, the first match winning: the operator's Argo CD rules
//! (`--health-rules` in the order given, then the configuration directory; within each, a
//! ConfigMap's keys before a directory's scripts and, in each, an exact `GROUP/KIND` before a
//! wildcard, as Argo CD searches its ConfigMap and then its own scripts), then the built-ins.
//! A fleet's Karmada `ResourceInterpreterCustomization`s come next, as one more [`Layer`]
//! matched by exact `apiVersion` and kind as Karmada matches them, its verdicts given by a
//! function the interpreter room hands over ([`Judge`]); it can be replaced while the program
//! runs, as the fleet is read again ([`Rules::use_fleet_layer`]). It compiles nothing ahead
//! and reads no file: sources arrive as texts ([`crate::config::health_rules`]).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use super::builtin;
use super::lua::{self, Limits, RuleError, Verdict};
use crate::config::health_rules::{HEALTH_FILE, RuleSource};
use crate::model::{CellHealth, HealthKind};

/// Where a rule came from, as the explanation names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Argo CD's health Lua (`health.lua` files, `argocd-cm` keys).
    ArgoRules,
    /// A Karmada `ResourceInterpreterCustomization`'s `InterpretHealth`.
    KarmadaInterpreter,
}

impl Family {
    fn label(self) -> &'static str {
        match self {
            Family::ArgoRules => "argocd rules",
            Family::KarmadaInterpreter => "karmada interpreter",
        }
    }
}

/// A verdict given by code outside this room (a Karmada interpreter's health script, run in
/// the same sandbox): the object in, what an Argo CD rule would have returned out.
pub type Judge = Arc<dyn Fn(&Value, Limits) -> Result<Verdict, RuleError> + Send + Sync>;

/// What a rule runs.
enum Script {
    /// An Argo CD health script, run with the object as `obj`.
    Argo(String),
    /// Another upstream's script (its text, which a verdict is kept for), behind its own
    /// calling convention.
    Judge { text: String, judge: Judge },
}

impl Script {
    fn text(&self) -> &str {
        match self {
            Script::Argo(text) | Script::Judge { text, .. } => text,
        }
    }
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Script::Argo(text) => f.debug_tuple("Argo").field(&text.len()).finish(),
            Script::Judge { text, .. } => f.debug_tuple("Judge").field(&text.len()).finish(),
        }
    }
}

/// One health script and where it was written.
#[derive(Debug)]
pub struct Rule {
    family: Family,
    /// The file (and ConfigMap key, or line) that holds it.
    origin: String,
    script: Script,
}

/// A set of rules searched as one: exact API versions and kinds (Karmada's targets), then
/// exact keys, then wildcards in order.
#[derive(Debug, Default)]
pub struct Layer {
    versioned: HashMap<(String, String), Arc<Rule>>,
    exact: HashMap<String, Arc<Rule>>,
    wildcards: Vec<(glob::Pattern, bool, Arc<Rule>)>,
}

/// Why a rule source could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleLoadError {
    #[error("{path}: not an argocd-cm ConfigMap: {reason}")]
    ConfigMap { path: String, reason: String },
    #[error("{path}: {key:?} is not a group and kind (GROUP_KIND or KIND)")]
    Key { path: String, key: String },
    #[error("{path}: {pattern:?} is not a pattern: {reason}")]
    Pattern {
        path: String,
        pattern: String,
        reason: String,
    },
}

/// The key Argo CD looks rules up by: `GROUP/KIND`, or `KIND` in the core group.
pub fn key(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

impl Layer {
    /// Adds `rule` under `pattern`; `separator`: a wildcard stays within one part of
    /// `GROUP/KIND`.
    fn add(&mut self, pattern: &str, separator: bool, rule: Rule) -> Result<(), RuleLoadError> {
        if !pattern.contains(['*', '?', '[']) {
            self.exact
                .entry(pattern.to_string())
                .or_insert(Arc::new(rule));
            return Ok(());
        }
        let glob = glob::Pattern::new(pattern).map_err(|error| RuleLoadError::Pattern {
            path: rule.origin.clone(),
            pattern: pattern.to_string(),
            reason: error.msg.to_string(),
        })?;
        self.wildcards.push((glob, separator, Arc::new(rule)));
        Ok(())
    }

    /// A Karmada interpreter's health for objects of exactly this `apiVersion` and `kind`,
    /// given by `judge` running the script `text` (the first added for a target wins, as
    /// Karmada merges customizations in name order).
    pub fn add_judge(
        &mut self,
        api_version: &str,
        kind: &str,
        origin: String,
        text: String,
        judge: Judge,
    ) {
        self.versioned
            .entry((api_version.to_string(), kind.to_string()))
            .or_insert(Arc::new(Rule {
                family: Family::KarmadaInterpreter,
                origin,
                script: Script::Judge { text, judge },
            }));
    }

    fn find(&self, api_version: &str, kind: &str, key: &str) -> Option<&Arc<Rule>> {
        if !self.versioned.is_empty()
            && let Some(rule) = self
                .versioned
                .get(&(api_version.to_string(), kind.to_string()))
        {
            return Some(rule);
        }
        self.exact.get(key).or_else(|| {
            self.wildcards.iter().find_map(|(glob, separator, rule)| {
                let options = glob::MatchOptions {
                    require_literal_separator: *separator,
                    ..glob::MatchOptions::new()
                };
                glob.matches_with(key, options).then_some(rule)
            })
        })
    }

    /// Whether the layer holds no rule.
    pub fn is_empty(&self) -> bool {
        self.versioned.is_empty() && self.exact.is_empty() && self.wildcards.is_empty()
    }

    /// A `resource_customizations`-shaped directory's scripts (paths relative to `root`):
    /// `GROUP/KIND/health.lua` or `KIND/health.lua`, a `_` in either standing for any run of
    /// characters within it, wildcard directories tried in sorted order as Argo CD does.
    pub fn directory(root: &str, scripts: &[(String, String)]) -> Result<Layer, RuleLoadError> {
        let mut layer = Layer::default();
        let mut sorted: Vec<&(String, String)> = scripts.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for (relative, script) in sorted {
            let Some(dir) = relative.strip_suffix(HEALTH_FILE) else {
                continue;
            };
            let dir = dir.trim_end_matches('/');
            if dir.is_empty() || dir.split('/').count() > 2 {
                continue;
            }
            let origin = format!("{}/{relative}", root.trim_end_matches('/'));
            let pattern = dir.replace('_', "*");
            layer.add(
                &pattern,
                true,
                Rule {
                    family: Family::ArgoRules,
                    origin,
                    script: Script::Argo(script.clone()),
                },
            )?;
        }
        Ok(layer)
    }

    /// An `argocd-cm` ConfigMap's health scripts: `resource.customizations.health.GROUP_KIND`
    /// (or `…health.KIND`, `…health.all`), and the older `resource.customizations` block
    /// (`GROUP/KIND: {health.lua: …}`). Wildcard keys are tried in key order (Argo CD takes
    /// whichever its map gives first); a `*` there may span the `/`.
    pub fn config_map(path: &str, text: &str) -> Result<Layer, RuleLoadError> {
        let bad = |reason: String| RuleLoadError::ConfigMap {
            path: path.to_string(),
            reason,
        };
        let document: Value = serde_saphyr::from_str(text).map_err(|e| bad(e.to_string()))?;
        if let Some(kind) = document.get("kind").and_then(Value::as_str)
            && kind != "ConfigMap"
        {
            return Err(bad(format!("its kind is {kind}")));
        }
        let data = match document.get("data") {
            Some(Value::Object(data)) => data.clone(),
            None | Some(Value::Null) => Default::default(),
            Some(_) => return Err(bad("data is not a map".to_string())),
        };
        let mut entries: Vec<(String, String, String)> = Vec::new();
        for (name, value) in &data {
            let Some(script) = value.as_str() else {
                continue;
            };
            if let Some(group_kind) = name.strip_prefix("resource.customizations.health.") {
                let pattern = override_key(group_kind).ok_or_else(|| RuleLoadError::Key {
                    path: path.to_string(),
                    key: name.clone(),
                })?;
                entries.push((pattern, format!("{path} {name}"), script.to_string()));
            } else if name == "resource.customizations" {
                let block: Value =
                    serde_saphyr::from_str(script).map_err(|e| bad(format!("{name}: {e}")))?;
                for (pattern, fields) in block.as_object().into_iter().flatten() {
                    if let Some(script) = fields.get("health.lua").and_then(Value::as_str) {
                        entries.push((
                            pattern.clone(),
                            format!("{path} {name} {pattern}"),
                            script.to_string(),
                        ));
                    }
                }
            }
        }
        entries.sort();
        let mut layer = Layer::default();
        for (pattern, origin, script) in entries {
            if script.is_empty() {
                continue;
            }
            layer.add(
                &pattern,
                false,
                Rule {
                    family: Family::ArgoRules,
                    origin,
                    script: Script::Argo(script),
                },
            )?;
        }
        Ok(layer)
    }
}

/// `cert-manager.io_Certificate` → `cert-manager.io/Certificate`, `Certificate` as it is,
/// `all` → `*/*`; anything with more than one `_` is not a key.
fn override_key(group_kind: &str) -> Option<String> {
    let parts: Vec<&str> = group_kind.split('_').collect();
    match parts.as_slice() {
        ["all"] => Some("*/*".to_string()),
        [kind] if !kind.is_empty() => Some((*kind).to_string()),
        [group, kind] => Some(format!("{group}/{kind}")),
        _ => None,
    }
}

/// Entries kept per object before the cache starts again.
const CACHE_ENTRIES: usize = 200_000;

/// Health for every kind: rule layers over the built-ins, with rule verdicts cached per object
/// version.
#[derive(Debug, Default)]
pub struct Rules {
    layers: Vec<Layer>,
    /// The fleet's Karmada interpreters: after `layers`, before the built-ins.
    fleet: RwLock<Option<Arc<Layer>>>,
    limits: Limits,
    found: Mutex<HashMap<(String, String), Found>>,
    verdicts: Mutex<HashMap<ObjectKey, Option<CellHealth>>>,
}

/// The rule found for an `(apiVersion, kind)`, if any.
type Found = Option<Arc<Rule>>;

/// An object version as the cache knows it: a hash of the rule (its origin and script: a script
/// edited in place is another rule) and the whole object.
/// Not uid and resourceVersion: an object a backend put together (a hub's status feedback laid
/// over its manifest) or copied keeps them while its status changes.
type ObjectKey = u64;

impl Rules {
    /// The built-ins alone.
    pub fn builtin() -> Rules {
        Rules::default()
    }

    /// Rules from these sources, in order, over the built-ins.
    pub fn from_sources(sources: &[RuleSource]) -> Result<Rules, RuleLoadError> {
        let mut layers = Vec::new();
        for source in sources {
            match source {
                RuleSource::Directory {
                    root,
                    scripts,
                    config_maps,
                } => {
                    for (path, text) in config_maps {
                        layers.push(Layer::config_map(&path.display().to_string(), text)?);
                    }
                    layers.push(Layer::directory(&root.display().to_string(), scripts)?);
                }
                RuleSource::ConfigMap { path, text } => {
                    layers.push(Layer::config_map(&path.display().to_string(), text)?);
                }
            }
        }
        Ok(Rules::with_layers(layers))
    }

    /// Rules from these layers, searched in order, over the built-ins.
    pub fn with_layers(layers: Vec<Layer>) -> Rules {
        Rules {
            layers: layers
                .into_iter()
                .filter(|layer| !layer.is_empty())
                .collect(),
            ..Rules::default()
        }
    }

    /// The same rules with other limits per call.
    pub fn with_limits(mut self, limits: Limits) -> Rules {
        self.limits = limits;
        self
    }

    /// How many rule layers there are (the built-ins not counted).
    pub fn layer_count(&self) -> usize {
        self.layers.len()
    }

    /// Makes `layer` the fleet's interpreters (`None`: the fleet has none), replacing those
    /// of a fleet read before.
    pub fn use_fleet_layer(&self, layer: Option<Layer>) {
        let layer = layer.filter(|layer| !layer.is_empty()).map(Arc::new);
        let mut fleet = self.fleet.write().unwrap_or_else(|e| e.into_inner());
        *fleet = layer;
        self.found.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn rule(&self, api_version: &str, kind: &str, key: &str) -> Option<Arc<Rule>> {
        let fleet = self.fleet.read().unwrap_or_else(|e| e.into_inner()).clone();
        if self.layers.is_empty() && fleet.is_none() {
            return None;
        }
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        found
            .entry((api_version.to_string(), kind.to_string()))
            .or_insert_with(|| {
                self.layers
                    .iter()
                    .chain(fleet.as_deref())
                    .find_map(|l| l.find(api_version, kind, key))
                    .cloned()
            })
            .clone()
    }

    /// Whether objects of this API version and kind have a health: a rule or a built-in
    /// knows the kind.
    pub fn has_health(&self, api_version: &str, kind: &str) -> bool {
        let group = group_of(api_version);
        self.rule(api_version, kind, &key(group, kind)).is_some()
            || builtin::has_health(api_version, kind)
    }

    /// The health of a live object and the rule that decided it, or `None` for a kind no
    /// rule and no built-in knows. An object being deleted is Progressing ("Pending
    /// deletion"), as Argo CD says.
    pub fn assess(&self, object: &Value) -> Option<CellHealth> {
        let api_version = text(object, "/apiVersion");
        let kind = text(object, "/kind");
        let key = key(group_of(api_version), kind);
        let Some(rule) = self.rule(api_version, kind, &key) else {
            return builtin_health(&key, object);
        };
        let id = object_key(&rule, object);
        let cached = self
            .verdicts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned();
        if let Some(health) = cached {
            return health;
        }
        let health = self.run(&key, &rule, object);
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|e| e.into_inner());
        if verdicts.len() >= CACHE_ENTRIES {
            verdicts.clear();
        }
        verdicts.insert(id, health.clone());
        health
    }

    fn run(&self, key: &str, rule: &Rule, object: &Value) -> Option<CellHealth> {
        let named = Some(format!("{key} ({}, {})", rule.family.label(), rule.origin));
        let verdict = match &rule.script {
            Script::Argo(script) => lua::run_health(&rule.origin, script, object, self.limits),
            Script::Judge { judge, .. } => judge(object, self.limits),
        };
        match verdict {
            Ok(None) => builtin_health(key, object),
            Ok(Some(returned)) => {
                let kind = HealthKind::ALL
                    .into_iter()
                    .find(|kind| kind.as_str() == returned.status);
                Some(match kind {
                    // Being deleted, the rule's deletion message if it gave one, else Argo
                    // CD's pending deletion.
                    Some(kind) if deleting(object) && !returned.deletion_message.is_empty() => {
                        CellHealth {
                            kind,
                            reason: returned.deletion_message,
                            since: None,
                            rule: named,
                        }
                    }
                    Some(kind) => with_deletion(
                        object,
                        CellHealth {
                            kind,
                            reason: returned.message,
                            since: None,
                            rule: named,
                        },
                    ),
                    None => with_deletion(
                        object,
                        CellHealth {
                            kind: HealthKind::Unknown,
                            reason: "Lua returned an invalid health status".to_string(),
                            since: None,
                            rule: named,
                        },
                    ),
                })
            }
            Err(error) => Some(CellHealth {
                kind: HealthKind::Unknown,
                reason: format!("{}: {error}", rule.origin),
                since: None,
                rule: named,
            }),
        }
    }
}

fn builtin_health(key: &str, object: &Value) -> Option<CellHealth> {
    builtin::assess(object).map(|health| {
        with_deletion(
            object,
            CellHealth {
                rule: Some(format!("{key} (built-in)")),
                ..health
            },
        )
    })
}

fn finalizers(object: &Value) -> Vec<&str> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether Argo CD counts the object as being deleted: it has a deletion time and no sync
/// hook's finalizer.
fn deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .is_some()
        && !finalizers(object).contains(&"argocd.argoproj.io/hook-finalizer")
}

/// `health`, or for an object being deleted Argo CD's pending deletion: Progressing, its
/// finalizers named, decided by the same rule.
fn with_deletion(object: &Value, health: CellHealth) -> CellHealth {
    if !deleting(object) {
        return health;
    }
    let finalizers = finalizers(object);
    let reason = if finalizers.is_empty() {
        "Pending deletion".to_string()
    } else {
        format!(
            "Pending deletion; blocked by finalizers: {}",
            finalizers.join(", ")
        )
    };
    CellHealth {
        kind: HealthKind::Progressing,
        reason,
        since: None,
        rule: health.rule,
    }
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

fn object_key(rule: &Rule, object: &Value) -> ObjectKey {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    rule.origin.hash(&mut hasher);
    rule.script.text().hash(&mut hasher);
    object.to_string().hash(&mut hasher);
    hasher.finish()
}
