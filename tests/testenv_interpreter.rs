//! A fleet's Karmada `ResourceInterpreterCustomization` and the operator's Argo CD rules on
//! real members: two custom kinds (CRDs with a status subresource) are installed on two KWOK
//! members' API servers, `flotilla apply` places one instance of each everywhere, and kubectl
//! writes each instance's `.status` (healthy on one member, not on the other). `flotilla
//! status -o json` then shows, per cluster, the health the fleet's `InterpretHealth` gives the
//! one kind and the health an Argo CD `health.lua` of `--health-rules` gives the other, each
//! named in `healthRule`; and a `--health-rules` rule for the customized kind decides it
//! instead of the fleet's customization. The console (its live backend driven headless
//! through the real session, under the same `--health-rules`) shows both verdicts, and after a save of an
//! edited customization shows the new script's verdicts on the same objects, without a restart.

mod harness;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use flotilla::app;
use flotilla::app::action::Action;
use flotilla::app::session::{Session, Store};
use flotilla::app::state::{AfterSave, Saved, State};
use flotilla::backend::kube::live;
use flotilla::engine::SourceFile;
use flotilla::model::HealthKind;
use serde_json::Value;
use tokio::sync::mpsc;

use harness::{FleetDir, TestNamespace, apply_fleet, env, flotilla, kubectl_ok, output_text};

/// How long the console may take to show what the members hold.
const CONSOLE_WAIT: Duration = Duration::from_secs(60);

/// A namespaced custom kind `kind` (plural `plural`) of `group`/v1 with a status subresource.
fn crd(group: &str, kind: &str, plural: &str) -> String {
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{{"name":"{plural}.{group}"}},
"spec":{{"group":"{group}","scope":"Namespaced",
"names":{{"plural":"{plural}","singular":"{singular}","kind":"{kind}","listKind":"{kind}List"}},
"versions":[{{"name":"v1","served":true,"storage":true,"subresources":{{"status":{{}}}},
"schema":{{"openAPIV3Schema":{{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}]}}}}"#,
        singular = kind.to_ascii_lowercase()
    )
}

/// The CRDs, installed on the members for the test and removed after it.
struct Crds {
    names: Vec<String>,
    members: Vec<String>,
    _file: tempfile::NamedTempFile,
}

impl Crds {
    fn install(group: &str, members: &[String]) -> Crds {
        let kinds = [("Widget", "widgets"), ("Gauge", "gauges")];
        let text: Vec<String> = kinds
            .iter()
            .map(|(kind, plural)| crd(group, kind, plural))
            .collect();
        let file = tempfile::NamedTempFile::new().expect("temp file");
        // kubectl reads a stream of JSON documents.
        std::fs::write(file.path(), text.join("\n")).expect("write the CRDs");
        let path = file.path().to_string_lossy().to_string();
        let names: Vec<String> = kinds
            .iter()
            .map(|(_, plural)| format!("crd/{plural}.{group}"))
            .collect();
        let crds = Crds {
            names,
            members: members.to_vec(),
            _file: file,
        };
        for member in members {
            kubectl_ok(member, &["apply", "-f", &path]);
            let mut wait = vec!["wait", "--for=condition=Established", "--timeout=60s"];
            wait.extend(crds.names.iter().map(String::as_str));
            kubectl_ok(member, &wait);
        }
        crds
    }
}

impl Drop for Crds {
    fn drop(&mut self) {
        for member in &self.members {
            let mut delete = vec!["delete", "--ignore-not-found", "--wait=false"];
            delete.extend(self.names.iter().map(String::as_str));
            let _ = harness::kubectl(member, &delete);
        }
    }
}

/// The fleet: both members, a Widget and a Gauge placed on each, and the customization that
/// tells a healthy Widget (`status.ready`).
fn fleet(group: &str, ns: &str, members: &[String]) -> FleetDir {
    let mut text = harness::prod_inventory(members);
    text.push_str(&format!(
        "\
apiVersion: {group}/v1
kind: Widget
metadata: {{name: dial, namespace: {ns}}}
spec: {{size: 3}}
---
apiVersion: {group}/v1
kind: Gauge
metadata: {{name: meter, namespace: {ns}}}
spec: {{scale: 10}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: custom, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: {group}/v1, kind: Widget, name: dial}}
  - {{apiVersion: {group}/v1, kind: Gauge, name: meter}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"
    ));
    FleetDir::new().fleet(text).file(
        "interpreters.yaml",
        customization(group, "observedObj.status.ready == true"),
    )
}

/// The customization of the Widget: healthy when `condition` holds of the observed object.
fn customization(group: &str, condition: &str) -> String {
    format!(
        "\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widget
spec:
  target:
    apiVersion: {group}/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil and {condition}
        end
"
    )
}
/// An Argo CD rules directory holding `GROUP/KIND/health.lua` with `script`; the script's path.
fn argo_rule(root: &Path, group: &str, kind: &str, script: &str) -> std::path::PathBuf {
    let dir = root.join(group).join(kind);
    std::fs::create_dir_all(&dir).expect("rules directory");
    let path = dir.join("health.lua");
    std::fs::write(&path, script).expect("write health.lua");
    path
}

/// Writes `status` into `resource`/`name`'s status subresource on `member`, as its controller
/// would (retrying while the API server starts serving a CRD it has just established).
fn set_status(member: &str, ns: &str, resource: &str, name: &str, status: &str) {
    let patch = format!(r#"{{"status":{status}}}"#);
    let object = format!("{resource}/{name}");
    let args = [
        "patch",
        &object,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ];
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = harness::kubectl(member, &args);
        if out.status.success() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "writing {object}'s status on {member}: {}",
            output_text(&out)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// (health, reason, healthRule) per (kind, cluster) in `flotilla status -o json`.
type Cells = BTreeMap<(String, String), (String, String, String)>;

fn status(dir: &Path, rules: &[&Path]) -> Cells {
    let mut args = vec!["status".to_string()];
    for path in rules {
        args.push("--health-rules".into());
        args.push(path.to_string_lossy().to_string());
    }
    args.extend(["-o".into(), "json".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = flotilla(dir, &args);
    let text = output_text(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "status answers 0 or 1: {text}"
    );
    let parsed: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("status printed no JSON ({e}): {text}"));
    parsed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let field = |key: &str| item[key].as_str().unwrap_or_default().to_string();
            (
                (
                    item["resource"]["kind"].as_str().unwrap_or_default().into(),
                    field("cluster"),
                ),
                (field("health"), field("reason"), field("healthRule")),
            )
        })
        .collect()
}

fn cell(health: &str, reason: &str, rule: &str) -> (String, String, String) {
    (health.into(), reason.into(), rule.into())
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_fleet_customization_and_an_argo_rule_judge_custom_kinds_per_member_and_the_operator_rule_wins()
{
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    assert_eq!(members.len(), 2, "the test environment needs 2 members");
    let (good, bad) = (&members[0], &members[1]);
    let group = format!("interp{}.example.io", std::process::id());
    let _crds = Crds::install(&group, &members);
    let ns = TestNamespace::on("interpreter", &members);
    let dir = fleet(&group, &ns.name, &members);
    apply_fleet(dir.path());

    let (widgets, gauges) = (format!("widgets.{group}"), format!("gauges.{group}"));
    set_status(good, &ns.name, &widgets, "dial", r#"{"ready": true}"#);
    set_status(bad, &ns.name, &widgets, "dial", r#"{"ready": false}"#);
    set_status(good, &ns.name, &gauges, "meter", r#"{"phase": "Ok"}"#);
    set_status(bad, &ns.name, &gauges, "meter", r#"{"phase": "Stuck"}"#);
    // kubectl reads back what the members' API servers now hold.
    let ready = |member: &str| {
        harness::json(member, &["get", &widgets, "dial", "-n", &ns.name])["status"]["ready"].clone()
    };
    assert_eq!(
        (ready(good), ready(bad)),
        (Value::Bool(true), Value::Bool(false))
    );

    let rules = tempfile::tempdir().expect("rules directory");
    let gauge_rule = argo_rule(
        rules.path(),
        &group,
        "Gauge",
        r#"
local hs = {}
if obj.status ~= nil and obj.status.phase == "Ok" then
  hs.status = "Healthy"
  hs.message = "the gauge reads Ok"
else
  hs.status = "Degraded"
  hs.message = "the gauge reads " .. tostring(obj.status and obj.status.phase)
end
return hs
"#,
    );
    // The customization's `luaScript` line, in the fleet directory's file.
    let by_interpreter = format!(
        "{group}/Widget (karmada interpreter, {}:11)",
        dir.join("interpreters.yaml").display()
    );
    let by_gauge_rule = format!("{group}/Gauge (argocd rules, {})", gauge_rule.display());

    let cells = status(dir.path(), &[rules.path()]);
    let widget = |cluster: &str| cells.get(&("Widget".to_string(), cluster.to_string()));
    let gauge = |cluster: &str| cells.get(&("Gauge".to_string(), cluster.to_string()));
    assert_eq!(
        widget(good),
        Some(&cell("Healthy", "", &by_interpreter)),
        "{cells:#?}"
    );
    assert_eq!(
        widget(bad),
        Some(&cell(
            "Degraded",
            "InterpretHealth: unhealthy (Karmada's Unhealthy)",
            &by_interpreter
        )),
        "{cells:#?}"
    );
    assert_eq!(
        gauge(good),
        Some(&cell("Healthy", "", &by_gauge_rule)),
        "{cells:#?}"
    );
    assert_eq!(
        gauge(bad),
        Some(&cell("Degraded", "the gauge reads Stuck", &by_gauge_rule)),
        "{cells:#?}"
    );

    // The operator's own rule for the Widget comes before the fleet's customization.
    let overriding = tempfile::tempdir().expect("rules directory");
    let widget_argo = argo_rule(
        overriding.path(),
        &group,
        "Widget",
        r#"return {status = "Suspended", message = "held by the operator's rule"}"#,
    );
    let by_widget_rule = format!("{group}/Widget (argocd rules, {})", widget_argo.display());
    let cells = status(dir.path(), &[overriding.path(), rules.path()]);
    for member in [good, bad] {
        assert_eq!(
            cells.get(&("Widget".to_string(), member.clone())),
            Some(&cell(
                "Suspended",
                "held by the operator's rule",
                &by_widget_rule
            )),
            "{member}: {cells:#?}"
        );
    }
    assert_eq!(
        cells.get(&("Gauge".to_string(), bad.clone())),
        Some(&cell("Degraded", "the gauge reads Stuck", &by_gauge_rule)),
        "{cells:#?}"
    );

    // The console on the same members under `--health-rules` (the Gauge's rule), its live
    // backend driven headless through the real session: the rule judges the Gauge's cells and
    // the fleet's customization the Widget's, and a saved edit of the customization judges
    // them again at once, though no object changed.
    console_follows_an_edited_customization(
        &dir,
        &group,
        (good, bad),
        rules.path(),
        &by_gauge_rule,
    );
}

/// A kind's health on (`good`, `bad`) as the console's model holds it.
type MemberHealths = (Option<HealthKind>, Option<HealthKind>);

fn console_follows_an_edited_customization(
    dir: &FleetDir,
    group: &str,
    (good, bad): (&str, &str),
    rules: &Path,
    by_gauge_rule: &str,
) {
    // The rules are installed as the binary installs `--health-rules` for its process.
    let cli = <flotilla::cli::Cli as clap::Parser>::try_parse_from([
        "flotilla",
        "--health-rules",
        &rules.to_string_lossy(),
        "console",
    ])
    .expect("--health-rules parses");
    flotilla::source::install_health_rules(&cli.global).expect("the rules load");
    let live_fleet = harness::live_fleet(dir.path(), &[]);
    let fleet = live_fleet.fleet.clone();
    let files = live_fleet.files.clone();
    let row_of = |kind: &str| {
        fleet
            .resources
            .iter()
            .position(|r| r.target.kind == kind)
            .unwrap_or_else(|| panic!("the {kind} row"))
    };
    let (row, gauge_row) = (row_of("Widget"), row_of("Gauge"));
    let column = |member: &str| fleet.cluster_index(member).expect("a member column");
    let (good_column, bad_column) = (column(good), column(bad));
    let healths = move |state: &State, row: usize| -> MemberHealths {
        let kind = |column| state.cells.health(row, column).map(|health| health.kind);
        (kind(good_column), kind(bad_column))
    };
    let widget = move |state: &State| healths(state, row);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let effects = live::spawn(live_fleet, events_tx);
        let state = app::state_for_fleet(&fleet, "test".into());
        let mut session = Session::new(state, files.clone(), Some(effects), Store::Directory);
        let until =
            async |session: &mut Session, events: &mut _, what: &str, want: MemberHealths| {
                let held =
                    harness::run_within(&mut session.state, events, CONSOLE_WAIT, what, |state| {
                        widget(state) == want
                    })
                    .await;
                assert!(
                    held,
                    "timed out waiting for {what}; the console holds {:?}",
                    widget(&session.state)
                );
            };
        until(
            &mut session,
            &mut events,
            "the customization's verdicts in the console",
            (Some(HealthKind::Healthy), Some(HealthKind::Degraded)),
        )
        .await;
        let gauge_held = harness::run_within(
            &mut session.state,
            &mut events,
            CONSOLE_WAIT,
            "the --health-rules rule's verdicts on the Gauge",
            |state| {
                healths(state, gauge_row) == (Some(HealthKind::Healthy), Some(HealthKind::Degraded))
            },
        )
        .await;
        assert!(
            gauge_held,
            "the console holds {:?}",
            healths(&session.state, gauge_row)
        );
        let stuck = session
            .state
            .cells
            .health(gauge_row, bad_column)
            .expect("the Gauge's health on the bad member");
        assert_eq!(stuck.reason, "the gauge reads Stuck");
        assert_eq!(
            stuck.rule.as_deref(),
            Some(by_gauge_rule),
            "the rule is named"
        );

        // The operator saves the customization inverted; the session reloads the fleet.
        let inverted = customization(group, "observedObj.status.ready == false");
        dir.write("interpreters.yaml", &inverted);
        let path = files
            .iter()
            .find(|file| file.path.ends_with("interpreters.yaml"))
            .expect("the customization's file")
            .path
            .clone();
        session.dispatch(Action::Saved(Saved::Written {
            files: vec![SourceFile {
                path,
                text: inverted,
            }],
            notice: "saved interpreters.yaml".into(),
            then: AfterSave::Propagate {
                apply: Vec::new(),
                delete: Vec::new(),
            },
        }));
        until(
            &mut session,
            &mut events,
            "the edited customization's verdicts in the console",
            (Some(HealthKind::Degraded), Some(HealthKind::Healthy)),
        )
        .await;
    });
}

/// The fleet of the retention check: a Widget on both members, and the customization whose
/// `Retain` keeps the member's `spec.paused` (a field an operator or controller on the member
/// sets), as Karmada's third-party customizations keep a CloneSet's or a Rollout's.
fn retaining_fleet(group: &str, ns: &str, members: &[String]) -> FleetDir {
    let mut text = harness::prod_inventory(members);
    text.push_str(&format!(
        "\
apiVersion: {group}/v1
kind: Widget
metadata: {{name: dial, namespace: {ns}}}
spec: {{size: 3, paused: false}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: custom, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: {group}/v1, kind: Widget, name: dial}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widget
spec:
  target:
    apiVersion: {group}/v1
    kind: Widget
  customizations:
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          desiredObj.spec.paused = observedObj.spec.paused
          return desiredObj
        end
"
    ));
    FleetDir::new().fleet(text)
}

fn code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

fn parsed(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", output_text(out)))
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_field_the_retain_script_keeps_is_not_drift_and_apply_leaves_it_as_the_member_set_it() {
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    assert_eq!(members.len(), 2, "the test environment needs 2 members");
    let member = &members[0];
    let group = format!("retain{}.example.io", std::process::id());
    let _crds = Crds::install(&group, &members);
    let ns = TestNamespace::on("retain", &members);
    let dir = retaining_fleet(&group, &ns.name, &members);
    apply_fleet(dir.path());
    let widgets = format!("widgets.{group}");
    let spec = |member: &str| {
        harness::json(member, &["get", &widgets, "dial", "-n", &ns.name])["spec"].clone()
    };

    // Someone on the member pauses the Widget, and changes its size.
    kubectl_ok(
        member,
        &[
            "patch",
            &widgets,
            "dial",
            "-n",
            &ns.name,
            "--type=merge",
            "-p",
            r#"{"spec":{"paused":true,"size":5}}"#,
        ],
    );

    // Drift names the size, which the fleet owns, and not `paused`, which the member keeps.
    let drift = flotilla(dir.path(), &["drift", "-o", "json"]);
    assert_eq!(code(&drift), Some(1), "{}", output_text(&drift));
    let items = parsed(&drift)["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0]["cluster"], member.as_str());
    let paths: Vec<&str> = items[0]["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["/spec/size"], "{items:#?}");

    // Apply takes the size back (forcing it from kubectl's hands, as Karmada's update does)
    // and leaves the member's pause alone.
    let applied = flotilla(dir.path(), &["apply", "--yes", "--force-conflicts"]);
    assert_eq!(code(&applied), Some(0), "{}", output_text(&applied));
    assert_eq!(
        spec(member),
        serde_json::json!({"size": 3, "paused": true}),
        "the member's pause survives apply"
    );
    assert_eq!(
        spec(&members[1]),
        serde_json::json!({"size": 3, "paused": false})
    );

    // In sync everywhere: drift and plan say so, though the member's pause differs from the
    // template.
    let drift = flotilla(dir.path(), &["drift"]);
    assert_eq!(code(&drift), Some(0), "{}", output_text(&drift));
    let plan = flotilla(dir.path(), &["plan", "-o", "json"]);
    assert_eq!(code(&plan), Some(0), "{}", output_text(&plan));
    assert!(
        parsed(&plan)["items"]
            .as_array()
            .is_some_and(|items| items.iter().all(|i| i["action"] == "unchanged")),
        "{}",
        output_text(&plan)
    );

    // Without the customization the pause is drift: the retention, not the comparison, kept it.
    let plain = dir.path().join("fleet.yaml");
    let text = std::fs::read_to_string(&plain).expect("the fleet file");
    let cut = text
        .find("---\napiVersion: config.karmada.io/v1alpha1")
        .expect("the customization");
    std::fs::write(&plain, &text[..cut]).expect("write the fleet without it");
    let drift = flotilla(dir.path(), &["drift", "-o", "json"]);
    assert_eq!(code(&drift), Some(1), "{}", output_text(&drift));
    assert!(
        output_text(&drift).contains("/spec/paused"),
        "{}",
        output_text(&drift)
    );
}
