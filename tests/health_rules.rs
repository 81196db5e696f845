//! Health rules as an operator meets them: Argo CD's Lua rules from `--health-rules` (a
//! directory or an `argocd-cm` ConfigMap file) and the configuration directory decide the
//! health `status` shows and name themselves in `healthRule`; a rule that loops, allocates
//! without end or reaches for the system gives Unknown with its file and the reason.

use std::path::Path;
use std::process::{Command, Output};

use flotilla::engine::health::Rules;
use flotilla::engine::health::lua::Limits;
use flotilla::engine::health::rules::Layer;
use flotilla::model::HealthKind;
use serde_json::{Value, json};

const DRIFTED: &str = "prod-us-east-2";

fn flotilla(config: &Path, args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", config)
        .output()
        .expect("run flotilla")
}

fn items(output: &Output) -> Vec<Value> {
    let value: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&output.stderr));
    });
    value["items"].as_array().cloned().unwrap_or_default()
}

fn cell<'a>(items: &'a [Value], kind: &str, name: &str) -> &'a Value {
    items
        .iter()
        .find(|i| {
            i["cluster"] == DRIFTED
                && i["resource"]["kind"] == kind
                && i["resource"]["name"] == name
        })
        .unwrap_or_else(|| panic!("no {kind}/{name} on {DRIFTED}"))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn rules_from_a_directory_and_a_config_map_decide_health_and_name_themselves_in_status() {
    let config = tempfile::tempdir().expect("temp dir");
    let rules = tempfile::tempdir().expect("temp dir");
    // A kind without built-in health gets one from a rule (core group: KIND/health.lua).
    let config_map_rule = rules.path().join("ConfigMap/health.lua");
    write(
        &config_map_rule,
        r#"
hs = {}
if obj.data ~= nil then
  hs.status = "Degraded"
  hs.message = "configured by a rule"
else
  hs.status = "Healthy"
end
return hs
"#,
    );
    // An argocd-cm ConfigMap file overrides the built-in Deployment health.
    let argocd_cm = rules.path().join("argocd-cm.yaml");
    write(
        &argocd_cm,
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.health.apps_Deployment: |
    return {status = "Suspended", message = "held by " .. obj.metadata.name}
"#,
    );
    let before = items(&flotilla(
        config.path(),
        &["status", "--demo", "-o", "json"],
    ));
    assert_eq!(
        cell(&before, "ConfigMap", "registry-config")["health"],
        "None"
    );
    assert_eq!(cell(&before, "Deployment", "checkout")["health"], "Healthy");
    assert_eq!(
        cell(&before, "Deployment", "checkout")["healthRule"],
        "apps/Deployment (built-in)"
    );

    let dir = rules.path().to_str().expect("utf-8");
    let output = flotilla(
        config.path(),
        &["status", "--demo", "--health-rules", dir, "-o", "json"],
    );
    let after = items(&output);
    let registry = cell(&after, "ConfigMap", "registry-config");
    assert_eq!(registry["health"], "Degraded", "{registry}");
    assert_eq!(registry["reason"], "configured by a rule", "{registry}");
    assert_eq!(
        registry["healthRule"],
        format!("ConfigMap (argocd rules, {})", config_map_rule.display()),
    );
    let checkout = cell(&after, "Deployment", "checkout");
    assert_eq!(checkout["health"], "Suspended", "{checkout}");
    assert_eq!(checkout["reason"], "held by checkout", "{checkout}");
    let rule = checkout["healthRule"].as_str().unwrap_or("");
    assert!(
        rule.starts_with("apps/Deployment (argocd rules, ")
            && rule.contains("argocd-cm.yaml resource.customizations.health.apps_Deployment"),
        "{rule}"
    );

    // The same ConfigMap file named alone, and the directory kept in the configuration
    // directory instead of named: the same verdicts.
    let cm = argocd_cm.to_str().expect("utf-8");
    let named = items(&flotilla(
        config.path(),
        &["status", "--demo", "--health-rules", cm, "-o", "json"],
    ));
    assert_eq!(
        cell(&named, "Deployment", "checkout")["health"],
        "Suspended"
    );
    assert_eq!(
        cell(&named, "ConfigMap", "registry-config")["health"],
        "None"
    );
    let user = config.path().join("flotilla/health/ConfigMap/health.lua");
    write(
        &user,
        "return {status = 'Progressing', message = 'from the user'}",
    );
    let configured = items(&flotilla(
        config.path(),
        &["status", "--demo", "-o", "json"],
    ));
    assert_eq!(
        cell(&configured, "ConfigMap", "registry-config")["health"],
        "Progressing"
    );
    // A named directory comes before the configuration directory.
    let both = items(&flotilla(
        config.path(),
        &["status", "--demo", "--health-rules", dir, "-o", "json"],
    ));
    assert_eq!(
        cell(&both, "ConfigMap", "registry-config")["health"],
        "Degraded"
    );
}

#[test]
fn a_missing_rules_path_or_a_broken_config_map_is_an_input_error() {
    let config = tempfile::tempdir().expect("temp dir");
    let missing = config.path().join("nope");
    let output = flotilla(
        config.path(),
        &[
            "status",
            "--demo",
            "--health-rules",
            missing.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--health-rules"));
    let broken = config.path().join("argocd-cm.yaml");
    write(&broken, "kind: Secret\ndata: {}\n");
    let output = flotilla(
        config.path(),
        &[
            "status",
            "--demo",
            "--health-rules",
            broken.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not an argocd-cm ConfigMap"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Rules over one kind, `example.com/Widget`, with this script.
fn widget_rules(script: &str) -> Rules {
    let layer = Layer::directory(
        "rules",
        &[(
            "example.com/Widget/health.lua".to_string(),
            script.to_string(),
        )],
    )
    .expect("a layer");
    Rules::with_layers(vec![layer])
}

fn widget(name: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "uid": name, "resourceVersion": "1"},
    })
}

fn unknown_because(rules: &Rules, name: &str) -> String {
    let health = rules.assess(&widget(name)).expect("a health");
    assert_eq!(health.kind, HealthKind::Unknown, "{health:?}");
    assert!(
        health
            .reason
            .starts_with("rules/example.com/Widget/health.lua: "),
        "the reason names the rule's file: {health:?}"
    );
    health.reason
}

#[test]
fn a_rule_that_runs_away_or_reaches_for_the_system_is_unknown_with_its_reason() {
    let forever = unknown_because(&widget_rules("while true do end"), "loop");
    assert!(forever.contains("instructions"), "{forever}");

    let hoard = unknown_because(
        &widget_rules("local t = {}\nlocal s = 'x'\nwhile true do s = s .. s; t[#t + 1] = s end"),
        "hoard",
    );
    assert!(hoard.contains("memory"), "{hoard}");

    let execute = unknown_because(&widget_rules("os.execute('touch /tmp/x')"), "exec");
    assert!(execute.contains("execute"), "{execute}");
    let io = unknown_because(&widget_rules("local f = io.open('/etc/passwd')"), "io");
    assert!(io.contains("io"), "{io}");
    let file = unknown_because(&widget_rules("dofile('/etc/passwd')"), "dofile");
    assert!(file.contains("dofile"), "{file}");
    let module = unknown_because(&widget_rules("local x = require('io')"), "require");
    assert!(module.contains("module io not found"), "{module}");

    // A finalizer that never ends, left for when the state is closed, is stopped as well.
    let rules = widget_rules(
        "setmetatable({}, {__gc = function() while true do end end})\n\
         return {status = 'Healthy', message = 'done'}",
    );
    let health = rules.assess(&widget("finalizer")).expect("a health");
    assert_eq!(health.reason, "done");

    // An error whose text never ends being made is stopped too.
    let raised = unknown_because(
        &widget_rules("error(setmetatable({}, {__tostring = function() while true do end end}))"),
        "tostring",
    );
    assert!(!raised.is_empty(), "{raised}");

    // A time bound holds a rule that instructions alone would let run longer.
    let slow = widget_rules("while true do end").with_limits(Limits {
        instructions: u64::MAX,
        time: std::time::Duration::from_millis(50),
        ..Limits::default()
    });
    let stopped = unknown_because(&slow, "slow");
    assert!(stopped.contains("stopped after"), "{stopped}");
}

#[test]
fn a_rule_is_run_once_per_object_version() {
    // A rule that counts its runs through a global cannot: each call gets a fresh state, so
    // the message would stay 1. What shows the cache is the verdict of a rule whose answer
    // depends on the clock: the same object version keeps its first verdict.
    let rules = widget_rules("return {status = 'Healthy', message = tostring(os.time())}");
    let first = rules.assess(&widget("cached")).expect("a health");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = rules.assess(&widget("cached")).expect("a health");
    assert_eq!(first, again);
    let mut newer = widget("cached");
    newer["metadata"]["resourceVersion"] = json!("2");
    let changed = rules.assess(&newer).expect("a health");
    assert_ne!(
        first.reason, changed.reason,
        "a new version is assessed again"
    );
}

#[test]
fn a_rule_returning_nil_leaves_the_built_ins_to_decide_and_wildcards_match_as_argo_cd_matches() {
    let layer = Layer::directory(
        "rules",
        &[
            (
                "apps/Deployment/health.lua".to_string(),
                "return nil".to_string(),
            ),
            (
                "_.crossplane.io/_/health.lua".to_string(),
                "return {status = 'Healthy', message = 'wildcard'}".to_string(),
            ),
        ],
    )
    .expect("a layer");
    let rules = Rules::with_layers(vec![layer]);
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "generation": 1},
        "spec": {"replicas": 1},
        "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1}
    });
    let health = rules.assess(&deployment).expect("a health");
    assert_eq!(health.kind, HealthKind::Healthy);
    assert_eq!(health.rule.as_deref(), Some("apps/Deployment (built-in)"));
    let claim = json!({"apiVersion": "database.example.crossplane.io/v1", "kind": "Claim"});
    assert_eq!(
        rules.assess(&claim).map(|h| h.reason),
        Some("wildcard".to_string())
    );
    // `_` stands within one part: a group without the suffix is not matched.
    assert_eq!(
        rules.assess(&json!({"apiVersion": "crossplane.io/v1", "kind": "Claim"})),
        None
    );
    assert!(rules.has_health("x.crossplane.io/v1", "Anything"));
    assert!(!rules.has_health("example.com/v1", "Anything"));
}
