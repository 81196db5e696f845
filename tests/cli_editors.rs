//! The console's editors as commands, through the real binary on fleet directories copied from
//! testdata into temp dirs: `placement set` rewriting the policy (its file's comments kept),
//! `override add|remove|list`, `undo` restoring a file and refusing after someone else changed
//! it, `--dry-run` writing nothing, `-o json`'s shape, the `--yes` rule for removals, exit codes
//! and bad input naming its flag. Nothing here reaches a cluster (hub tiers do, in
//! testenv_karmada.rs).

mod harness;

use std::path::PathBuf;

use harness::FleetDir;
use std::process::{Command, Output};

use serde_json::Value;

/// A fleet directory copied from testdata, with its own state directory (the edit journal).
struct Fleet {
    dir: FleetDir,
}

impl Fleet {
    fn copy_of(fixture: &str) -> Fleet {
        Fleet {
            dir: FleetDir::copy_of(fixture),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn read(&self, name: &str) -> String {
        self.dir.read(name)
    }

    /// Runs flotilla on this fleet, without a terminal (stdin is empty).
    fn run(&self, args: &[&str]) -> Output {
        let fleet = self.path();
        Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("--fleet")
            .arg(&fleet)
            .args(args)
            .env("XDG_STATE_HOME", self.dir.beside("state"))
            .env("XDG_CONFIG_HOME", self.dir.beside("config"))
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run flotilla")
    }

    /// Runs flotilla and parses its `-o json` output, asserting the exit code.
    fn json(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let output = self.run(&all);
        assert_eq!(output.status.code(), Some(code), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
            panic!(
                "not JSON ({err}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }

    /// Whether `render` places `object` (`Kind/name`) on `cluster`.
    fn places(&self, cluster: &str, object: &str) -> bool {
        self.rendered_on(cluster).iter().any(|o| o == object)
    }

    /// `placement set ConfigMap/p/names ARGS… -o json`, asserting the exit code: its report.
    fn set_names(&self, args: &[&str], code: i32) -> Value {
        let mut all = vec!["placement", "set", "ConfigMap/p/names"];
        all.extend(args);
        self.json(&all, code)
    }

    /// The names of the objects `render` places on `cluster`.
    fn rendered_on(&self, cluster: &str) -> Vec<String> {
        let output = self.run(&["render", "--cluster", cluster, "-o", "json"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let value: Value = serde_json::from_slice(&output.stdout).expect("render JSON");
        value["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| {
                format!(
                    "{}/{}",
                    item["object"]["kind"].as_str().unwrap_or_default(),
                    item["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                )
            })
            .collect()
    }

    fn rendered_object(&self, cluster: &str, kind: &str, name: &str) -> Value {
        let output = self.run(&["render", "--cluster", cluster, "-o", "json"]);
        let value: Value = serde_json::from_slice(&output.stdout).expect("render JSON");
        value["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| item["object"].clone())
            .find(|object| object["kind"] == kind && object["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} on {cluster}"))
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn placement_set_adds_a_cluster_and_keeps_the_files_comments() {
    let fleet = Fleet::copy_of("karmada-placement");
    assert!(!fleet.places("m2", "ConfigMap/names"));
    let report = fleet.set_names(&["--add-cluster", "m2"], 0);
    assert_eq!(report["resource"], "ConfigMap/p/names");
    assert_eq!(report["edited"], "PropagationPolicy p/names");
    assert_eq!(strings(&report["gained"]), ["m2"]);
    assert_eq!(strings(&report["lost"]), Vec::<String>::new());
    assert_eq!(report["written"], true);
    assert_eq!(report["dryRun"], false);
    assert!(
        report["file"]
            .as_str()
            .unwrap_or_default()
            .ends_with("fleet.yaml"),
        "{report}"
    );
    // A one-line diff: the flow mapping stays flow on its line.
    let diff = report["fileDiff"].as_str().unwrap_or_default();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(
        changed,
        [
            "-    clusterAffinity: {clusterNames: [m1, m3, m5, ghost], exclude: [m3]}",
            "+    clusterAffinity: {clusterNames: [ghost, m1, m2, m3, m5], exclude: [m3]}"
        ],
        "{diff}"
    );
    // The policy file: the new cluster list, the file's comments and other documents kept,
    // a backup of the previous text beside it.
    let text = fleet.read("fleet.yaml");
    assert!(text.starts_with(
        "# One template per placement rule, each claimed by a policy of the same name.\n"
    ));
    assert!(
        text.contains(
            "    clusterAffinity: {clusterNames: [ghost, m1, m2, m3, m5], exclude: [m3]}\n"
        ),
        "{text}"
    );
    assert!(text.contains("metadata: {name: fields, namespace: p}"));
    assert!(fleet.file("fleet.yaml.flotilla-bak").exists());
    // The fleet as flotilla now loads it places the ConfigMap on m2.
    assert!(fleet.places("m2", "ConfigMap/names"));
    assert!(fleet.places("m1", "ConfigMap/names"));
}

#[test]
fn a_dry_run_prints_the_change_and_writes_nothing() {
    let fleet = Fleet::copy_of("karmada-placement");
    let before = fleet.read("fleet.yaml");
    let report = fleet.set_names(&["--clusters", "m2,m4", "--dry-run"], 1);
    assert_eq!(strings(&report["gained"]), ["m2", "m4"]);
    assert_eq!(strings(&report["lost"]), ["m1"]);
    assert_eq!(report["written"], false);
    assert_eq!(report["dryRun"], true);
    let diffs = report["diffs"].as_array().expect("diffs");
    assert_eq!(strings(&diffs[0]["clusters"]), ["m2", "m4"]);
    assert!(
        diffs[0]["diff"]
            .as_str()
            .unwrap_or_default()
            .contains("+kind: ConfigMap")
    );
    assert_eq!(fleet.read("fleet.yaml"), before, "a dry run writes nothing");
    assert!(!fleet.file("fleet.yaml.flotilla-bak").exists());
    // The table form says the same to a person.
    let table = fleet.run(&[
        "placement",
        "set",
        "ConfigMap/p/names",
        "--clusters",
        "m2,m4",
        "--dry-run",
    ]);
    assert_eq!(table.status.code(), Some(1));
    let text = String::from_utf8_lossy(&table.stdout);
    // A fleet directory's cluster leaving keeps its objects, as the console's review says.
    assert!(
        text.contains("m1        leaves: its objects stay on it until `flotilla apply --prune`"),
        "{text}"
    );
    assert!(text.contains("m2        gains"), "{text}");
    assert!(
        text.contains("dry run: PropagationPolicy p/names not written"),
        "{text}"
    );
    // An edit that changes nothing is not a change: exit 0 and nothing written.
    let same = fleet.set_names(&["--add-cluster", "m1", "--dry-run"], 0);
    assert_eq!(same["fileDiff"], "");
    assert_eq!(fleet.read("fleet.yaml"), before);
}

#[test]
fn removing_an_object_from_a_cluster_needs_yes_without_a_terminal() {
    let fleet = Fleet::copy_of("karmada-placement");
    let before = fleet.read("fleet.yaml");
    let refused = fleet.run(&["placement", "set", "ConfigMap/p/names", "--clusters", "m2"]);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(
        message.contains("deletes ConfigMap/p/names from 1 cluster (m1)"),
        "{message}"
    );
    assert!(message.contains("pass --yes"), "{message}");
    assert_eq!(fleet.read("fleet.yaml"), before, "refused: nothing written");
    let report = fleet.set_names(&["--clusters", "m2", "--yes"], 0);
    assert_eq!(strings(&report["lost"]), ["m1"]);
    assert_eq!(report["written"], true);
    assert!(!fleet.places("m1", "ConfigMap/names"));
    assert!(fleet.places("m2", "ConfigMap/names"));
}

#[test]
fn selectors_tolerations_and_clearing_the_cluster_list() {
    let fleet = Fleet::copy_of("karmada-placement");
    // m5 carries dedicated=gpu:NoSchedule: a selector for env=dev leaves it out until tolerated.
    let untolerated = fleet.set_names(
        &[
            "--clusters",
            "",
            "--cluster-selector",
            "env=dev",
            "--dry-run",
        ],
        1,
    );
    assert_eq!(strings(&untolerated["gained"]), Vec::<String>::new());
    assert_eq!(strings(&untolerated["lost"]), ["m1"]);
    let report = fleet.set_names(
        &[
            "--clusters",
            "",
            "--cluster-selector",
            "env=dev",
            "--tolerate",
            "dedicated=gpu:NoSchedule",
            "--yes",
        ],
        0,
    );
    assert_eq!(strings(&report["lost"]), ["m1"]);
    assert!(fleet.places("m5", "ConfigMap/names"));
    let text = fleet.read("fleet.yaml");
    assert!(
        !text.contains("clusterNames: [m1, m3, m5, ghost]"),
        "{text}"
    );
    assert!(text.contains("env: dev"), "{text}");
    assert!(text.contains("key: dedicated"), "{text}");
}

#[test]
fn bad_input_is_exit_2_names_the_flag_and_writes_nothing() {
    let fleet = Fleet::copy_of("karmada-placement");
    let before = fleet.read("fleet.yaml");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/nope",
                "--add-cluster",
                "m2",
            ],
            "no federated resource ConfigMap/p/nope",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/nmaes",
                "--add-cluster",
                "m2",
            ],
            "no federated resource ConfigMap/p/nmaes in this fleet; did you mean ConfigMap/p/names?",
        ),
        (
            &["placement", "set", "names", "--add-cluster", "m2"],
            "KIND/NAMESPACE/NAME",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/names",
                "--cluster-selector",
                "env in prod",
            ],
            "--cluster-selector \"env in prod\": `env in prod`: the values go in parentheses",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/names",
                "--add-cluster",
                "mars",
            ],
            "--add-cluster mars: no such cluster in the fleet",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/names",
                "--tolerate",
                "dedicated=gpu:Sometimes",
            ],
            "--tolerate",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/names",
                "--field-selector",
                "color=red",
            ],
            "--field-selector \"color=red\": `color`: a field selector matches only provider, region or zone",
        ),
        (
            &["placement", "set", "ConfigMap/p/names"],
            "name what to change",
        ),
        (
            &[
                "placement",
                "set",
                "ConfigMap/p/names",
                "--remove-cluster",
                "m2",
            ],
            "--remove-cluster m2: `m2` is not in the placement's cluster list",
        ),
        (
            &[
                "override",
                "add",
                "Deployment/p/tolerated",
                "--cluster",
                "m1",
                "--json-patch",
                "{\"op\":\"move\",\"path\":\"/spec\"}",
            ],
            "--json-patch: op `move` is not one the overrides take",
        ),
        (
            &[
                "override",
                "add",
                "Deployment/p/tolerated",
                "--cluster",
                "m1",
                "--json-patch",
                "{\"op\":\"replace\",\"path\":\"/spec/nope\",\"value\":1}",
            ],
            "--json-patch: /spec/nope does not exist in the rendered object",
        ),
        (
            &[
                "override",
                "add",
                "Deployment/p/tolerated",
                "--cluster",
                "mars",
                "--replicas",
                "3",
            ],
            "--cluster \"mars\": no cluster named `mars` in the inventory",
        ),
        (
            &[
                "override",
                "add",
                "Deployment/p/tolerated",
                "--cluster",
                "m1",
                "--label",
                "bad key=x",
            ],
            "--label \"bad key=x\": `bad key` is not a key",
        ),
        (
            &[
                "override",
                "remove",
                "Deployment/p/tolerated",
                "--rule",
                "1",
            ],
            "--rule 1: Deployment/p/tolerated has 0 override rule(s)",
        ),
        (
            &["reschedule", "Deployment/p/tolerated"],
            "pass --hub CONTEXT",
        ),
        (
            &[
                "ocm-placement",
                "set",
                "default/web",
                "--number-of-clusters",
                "2",
            ],
            "pass --hub CONTEXT",
        ),
    ];
    for (args, expected) in cases {
        let output = fleet.run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains(expected),
            "{args:?}: expected {expected:?} in {message}"
        );
        assert!(!message.contains("panicked"), "{message}");
    }
    assert_eq!(fleet.read("fleet.yaml"), before);
    // --readonly forbids the write outright.
    let readonly = fleet.run(&[
        "--readonly",
        "placement",
        "set",
        "ConfigMap/p/names",
        "--add-cluster",
        "m2",
    ]);
    assert_eq!(readonly.status.code(), Some(2));
    assert!(stderr(&readonly).contains("--readonly forbids every write"));
    assert_eq!(fleet.read("fleet.yaml"), before);
}

#[test]
fn override_add_list_and_remove_change_only_the_targeted_cluster() {
    let fleet = Fleet::copy_of("karmada-overrides");
    let original = fleet.read("fleet.yaml");
    let listed = fleet.json(&["override", "list", "Deployment/o/app"], 0);
    let before = listed["items"].as_array().expect("items").len();
    assert!(before > 0);
    let u1_before = fleet.rendered_object("u1", "Deployment", "app");
    let c1_before = fleet.rendered_object("c1", "Deployment", "app");
    let report = fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster",
            "u1",
            "--replicas",
            "7",
        ],
        0,
    );
    assert_eq!(strings(&report["changed"]), ["u1"]);
    assert_eq!(strings(&report["gained"]), Vec::<String>::new());
    assert_eq!(report["written"], true);
    assert_eq!(
        report["edited"],
        "OverridePolicy o/z-flotilla-adopt-deployment-app"
    );
    // The new rule is flotilla's own policy, appended to the template's file.
    let text = fleet.read("fleet.yaml");
    assert!(
        text.starts_with(&original[..original.len() - 1]),
        "the old text stays as it was"
    );
    assert!(text.contains("name: z-flotilla-adopt-deployment-app"));
    assert_eq!(
        fleet.rendered_object("u1", "Deployment", "app")["spec"]["replicas"],
        7
    );
    assert_eq!(
        fleet.rendered_object("c1", "Deployment", "app"),
        c1_before,
        "the other clusters' objects stay as they were"
    );
    assert_ne!(u1_before["spec"]["replicas"], 7);
    // Listed last, with its clusters; removing it by that number takes it back out.
    let listed = fleet.json(&["override", "list", "Deployment/o/app"], 0);
    let items = listed["items"].as_array().expect("items");
    assert_eq!(items.len(), before + 1);
    let last = &items[before];
    assert_eq!(last["rule"], before + 1);
    assert_eq!(strings(&last["clusters"]), ["u1"]);
    assert!(
        last["overriders"][0]
            .as_str()
            .unwrap_or_default()
            .contains("/spec/replicas")
    );
    let rule = (before + 1).to_string();
    let dry = fleet.json(
        &[
            "override",
            "remove",
            "Deployment/o/app",
            "--rule",
            &rule,
            "--dry-run",
        ],
        1,
    );
    assert_eq!(strings(&dry["changed"]), ["u1"]);
    assert_eq!(fleet.read("fleet.yaml"), text, "a dry run writes nothing");
    fleet.json(
        &["override", "remove", "Deployment/o/app", "--rule", &rule],
        0,
    );
    assert_eq!(
        fleet.rendered_object("u1", "Deployment", "app")["spec"]["replicas"],
        u1_before["spec"]["replicas"]
    );
}

#[test]
fn override_add_takes_the_editors_overriders() {
    let fleet = Fleet::copy_of("karmada-overrides");
    fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster",
            "u1",
            "--label",
            "tier=gold",
        ],
        0,
    );
    fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster-selector",
            "tier=core",
            "--annotation",
            "team=web",
        ],
        0,
    );
    fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster",
            "u1",
            "--env",
            "MODE=fast",
        ],
        0,
    );
    fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster",
            "u1",
            "--json-patch",
            r#"{"op":"add","path":"/spec/paused","value":true}"#,
        ],
        0,
    );
    let u1 = fleet.rendered_object("u1", "Deployment", "app");
    assert_eq!(u1["metadata"]["labels"]["tier"], "gold");
    assert_eq!(u1["metadata"]["annotations"]["team"], "web");
    assert_eq!(u1["spec"]["paused"], true);
    let web = u1["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .find(|c| c["env"].is_array())
        .cloned()
        .expect("a container with env");
    assert_eq!(web["env"][0]["name"], "MODE");
    assert_eq!(web["env"][0]["value"], "fast");
    // c1 is tier=core too: the annotation reaches it; the label and env do not.
    let c1 = fleet.rendered_object("c1", "Deployment", "app");
    assert_eq!(c1["metadata"]["annotations"]["team"], "web");
    assert_ne!(c1["metadata"]["labels"]["tier"], "gold");
    assert!(c1["spec"]["paused"].is_null());
}

#[test]
fn undo_restores_the_file_as_it_was_one_edit_at_a_time() {
    let fleet = Fleet::copy_of("karmada-placement");
    let original = fleet.read("fleet.yaml");
    fleet.set_names(&["--add-cluster", "m2"], 0);
    let once = fleet.read("fleet.yaml");
    fleet.set_names(&["--add-cluster", "m4"], 0);
    assert!(fleet.places("m4", "ConfigMap/names"));
    // Undoing the second edit removes the ConfigMap from m4: a deletion there, so --yes.
    let dry = fleet.json(&["undo", "--dry-run"], 1);
    assert_eq!(strings(&dry["lost"]), ["m4"]);
    assert_eq!(dry["edited"], "PropagationPolicy p/names");
    let refused = fleet.run(&["undo"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("pass --yes"));
    let undone = fleet.json(&["undo", "--yes"], 0);
    assert_eq!(undone["written"], true);
    assert_eq!(fleet.read("fleet.yaml"), once);
    fleet.json(&["undo", "--yes"], 0);
    assert_eq!(
        fleet.read("fleet.yaml"),
        original,
        "byte for byte as it was"
    );
    // Nothing left to undo.
    let nothing = fleet.run(&["undo"]);
    assert_eq!(nothing.status.code(), Some(0));
    assert!(stderr(&nothing).contains("nothing to undo"));
    assert_eq!(fleet.read("fleet.yaml"), original);
}

#[test]
fn undo_refuses_when_someone_changed_the_file_since() {
    let fleet = Fleet::copy_of("karmada-overrides");
    fleet.json(
        &[
            "override",
            "add",
            "Deployment/o/app",
            "--cluster",
            "u1",
            "--replicas",
            "7",
        ],
        0,
    );
    let theirs = format!("{}# someone else's note\n", fleet.read("fleet.yaml"));
    std::fs::write(fleet.file("fleet.yaml"), &theirs).expect("write");
    let refused = fleet.run(&["undo", "--yes"]);
    assert_eq!(refused.status.code(), Some(2));
    let message = stderr(&refused);
    assert!(
        message.contains("changed since flotilla's override add"),
        "{message}"
    );
    assert!(message.contains("nothing was restored"), "{message}");
    assert_eq!(fleet.read("fleet.yaml"), theirs, "their change is kept");
}

#[test]
fn a_hub_that_does_not_answer_is_exit_3() {
    let fleet = Fleet::copy_of("karmada-placement");
    // A kubeconfig whose only server is a port nothing listens on.
    let kubeconfig = fleet.dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: gone\n  context: {cluster: gone, user: u}\n",
    )
    .expect("write kubeconfig");
    let kubeconfig = kubeconfig.display().to_string();
    for args in [
        vec![
            "placement",
            "set",
            "ConfigMap/p/names",
            "--add-cluster",
            "m2",
        ],
        vec!["reschedule", "ConfigMap/p/names", "--yes"],
        vec![
            "ocm-placement",
            "set",
            "default/web",
            "--number-of-clusters",
            "1",
        ],
    ] {
        let mut all = vec!["--kubeconfig", kubeconfig.as_str(), "--hub", "gone"];
        all.extend(args.iter().copied());
        let output = fleet.run(&all);
        assert_eq!(
            output.status.code(),
            Some(3),
            "{all:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("cannot reach the hub"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn every_editor_explains_itself_in_help() {
    let fleet = Fleet::copy_of("karmada-placement");
    let help = |args: &[&str]| {
        let output = fleet.run(args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let placement = help(&["placement", "set", "--help"]);
    for flag in [
        "--clusters",
        "--add-cluster",
        "--remove-cluster",
        "--cluster-selector",
        "--field-selector",
        "--tolerate",
        "--replica-scheduling",
        "--dry-run",
        "--yes",
        "'' clears it",
        "Exit codes: 0 written",
        "flotilla placement set ConfigMap/shop/web --add-cluster us-1 --dry-run",
    ] {
        assert!(
            placement.contains(flag),
            "placement set --help lacks {flag}:\n{placement}"
        );
    }
    let add = help(&["override", "add", "--help"]);
    for flag in [
        "--cluster <A,B>",
        "--cluster-selector",
        "--json-patch",
        "--image-tag",
        "--replicas",
        "--label",
        "--annotation",
        "--env",
    ] {
        assert!(
            add.contains(flag),
            "override add --help lacks {flag}:\n{add}"
        );
    }
    assert!(help(&["override", "remove", "--help"]).contains("--rule <N>"));
    assert!(help(&["undo", "--help"]).contains("refuses (exit 2) when the file or object changed"));
    assert!(help(&["reschedule", "--help"]).contains("rescheduleTriggeredAt"));
    let ocm = help(&["ocm-placement", "set", "--help"]);
    for flag in [
        "--cluster-selector",
        "--claim-selector",
        "--tolerate",
        "--number-of-clusters",
    ] {
        assert!(
            ocm.contains(flag),
            "ocm-placement set --help lacks {flag}:\n{ocm}"
        );
    }
}

#[test]
fn the_kubefed_dialect_is_edited_in_its_federated_object() {
    let fleet = Fleet::copy_of("kubefed");
    let report = fleet.json(
        &[
            "placement",
            "set",
            "ConfigMap/team/prod",
            "--cluster-selector",
            "env=dev",
            "--yes",
        ],
        0,
    );
    assert_eq!(report["edited"], "FederatedConfigMap team/prod");
    assert_eq!(strings(&report["gained"]), ["k3"]);
    assert_eq!(strings(&report["lost"]), ["k1", "k2"]);
    assert!(fleet.places("k3", "ConfigMap/prod"));
    assert!(!fleet.places("k1", "ConfigMap/prod"));
    let text = fleet.read("fleet.yaml");
    assert!(
        text.starts_with(
            "# KubeFed placement and override rules, one Federated object per rule.\n"
        )
    );
    // What KubeFed has no field for is refused, naming the reason.
    let refused = fleet.run(&[
        "placement",
        "set",
        "ConfigMap/team/prod",
        "--tolerate",
        "dedicated=gpu:NoSchedule",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("KubeFed placements have no field selector, tolerations"));
    // An override goes into the Federated object's spec.overrides, for the named cluster only.
    let report = fleet.json(
        &[
            "override",
            "add",
            "ConfigMap/team/all",
            "--cluster",
            "k1",
            "--label",
            "tier=gold",
        ],
        0,
    );
    assert_eq!(strings(&report["changed"]), ["k1"]);
    assert_eq!(report["edited"], "FederatedConfigMap team/all");
    assert_eq!(
        fleet.rendered_object("k1", "ConfigMap", "all")["metadata"]["labels"]["tier"],
        "gold"
    );
    assert!(
        fleet.rendered_object("k2", "ConfigMap", "all")["metadata"]["labels"]["tier"].is_null()
    );
    let refused = fleet.run(&[
        "override",
        "add",
        "ConfigMap/team/all",
        "--cluster-selector",
        "env=prod",
        "--label",
        "tier=gold",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("KubeFed overrides name clusters one by one"));
}

#[test]
fn on_a_terminal_a_removal_is_asked_and_only_yes_writes_it() {
    let fleet = Fleet::copy_of("karmada-placement");
    let before = fleet.read("fleet.yaml");
    let path = fleet.path().display().to_string();
    let args = [
        "--fleet",
        path.as_str(),
        "placement",
        "set",
        "ConfigMap/p/names",
        "--clusters",
        "m2",
    ];
    let question = "deletes ConfigMap/p/names from 1 cluster (m1)? [y/N]";
    let mut declined = harness::PtyApp::spawn(&args, 160, 50, &[]);
    declined.wait_for("the question", |screen| screen.contains(question));
    declined.send("n\r");
    assert_eq!(declined.wait_exit(), 0);
    assert_eq!(fleet.read("fleet.yaml"), before, "no: nothing written");
    let mut accepted = harness::PtyApp::spawn(&args, 160, 50, &[]);
    accepted.wait_for("the question", |screen| screen.contains(question));
    accepted.send("y\r");
    assert_eq!(accepted.wait_exit(), 0);
    assert_ne!(fleet.read("fleet.yaml"), before, "yes: written");
    assert!(!fleet.places("m1", "ConfigMap/names"));
}

#[test]
fn a_secrets_values_are_never_printed_by_an_edit() {
    let fleet = Fleet::copy_of("karmada-fidelity");
    let patch = r#"{"op":"add","path":"/stringData/token","value":"opensesame"}"#;
    for (extra, code) in [(&["--dry-run"][..], 1), (&["-o", "json"][..], 0)] {
        let mut args = vec![
            "override",
            "add",
            "Secret/shop/creds",
            "--cluster",
            "east",
            "--json-patch",
            patch,
        ];
        args.extend(extra);
        let output = fleet.run(&args);
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output)
        );
        assert_eq!(output.status.code(), Some(code), "{printed}");
        assert!(
            printed.contains("token"),
            "the diff still names the key: {printed}"
        );
        assert!(!printed.contains("opensesame"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }
    let undo = fleet.run(&["undo", "--dry-run"]);
    assert_eq!(undo.status.code(), Some(1), "{}", stderr(&undo));
    assert!(!String::from_utf8_lossy(&undo.stdout).contains("opensesame"));
    // Written all the same: east's Secret gets the key.
    let east = fleet.rendered_object("east", "Secret", "creds");
    assert!(
        east.pointer("/data/token")
            .or(east.pointer("/stringData/token"))
            .is_some(),
        "{east}"
    );
}

#[test]
fn a_shared_policys_edit_names_every_resource_it_changes_and_a_cluster_that_cannot_match() {
    let fleet = Fleet::copy_of("demo");
    let before = fleet.read("karmada-shop.yaml");
    let out = fleet.run(&[
        "placement",
        "set",
        "Deployment/shop/inventory",
        "--add-cluster",
        "staging-eu-west-1",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let affected: Vec<&str> = json["affected"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a["resource"].as_str().unwrap_or_default())
        .collect();
    // The edited resource first, then every other resource of shop-default it removes.
    assert_eq!(
        affected,
        [
            "Deployment/shop/inventory",
            "Service/shop/checkout",
            "ConfigMap/shop/registry-config"
        ],
        "{json}"
    );
    for entry in json["affected"].as_array().into_iter().flatten() {
        assert_eq!(strings(&entry["lost"]), strings(&json["lost"]), "{entry}");
    }
    let warnings = strings(&json["warnings"]);
    assert!(
        warnings.iter().any(|w| w
            .starts_with("2 other resource(s) share PropagationPolicy shop/shop-default")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("staging-eu-west-1 is named but still not placed: ")
            && w.contains("env in (prod,edge)")
            && w.contains("add it to the cluster selector too, or give Deployment/shop/inventory a policy of its own")),
        "{warnings:?}"
    );
    // The table names them too.
    let table = fleet.run(&[
        "placement",
        "set",
        "Deployment/shop/inventory",
        "--add-cluster",
        "staging-eu-west-1",
        "--dry-run",
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("also Service/shop/checkout: leaves edge-store-0001"),
        "{text}"
    );
    assert_eq!(
        fleet.read("karmada-shop.yaml"),
        before,
        "a dry run writes nothing"
    );
}

#[test]
fn own_policy_moves_only_the_edited_resource_and_leaves_the_shared_policy_alone() {
    let fleet = Fleet::copy_of("demo");
    let before_policy = fleet.read("karmada-shop.yaml");
    let on_prod = fleet.rendered_on("prod-eu-west-1");
    let args = [
        "placement",
        "set",
        "Deployment/shop/inventory",
        "--add-cluster",
        "staging-eu-west-1",
        "--cluster-selector",
        "",
        "--own-policy",
    ];
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let json = fleet.json(&dry, 1);
    // Only the edited resource changes: the shared policy's other resources stay where they are.
    let affected: Vec<&str> = json["affected"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a["resource"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(affected, ["Deployment/shop/inventory"], "{json}");
    assert_eq!(strings(&json["gained"]), ["staging-eu-west-1"], "{json}");
    assert_eq!(json["edited"], "PropagationPolicy shop/inventory", "{json}");
    assert_eq!(fleet.read("karmada-shop.yaml"), before_policy, "dry run");

    let mut yes = args.to_vec();
    yes.push("--yes");
    let out = fleet.run(&yes);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = fleet.read("karmada-shop.yaml");
    // The shared policy's text is untouched; the new policy is appended after it.
    assert!(text.starts_with(before_policy.trim_end()), "{text}");
    assert!(
        text.contains("name: inventory\n  namespace: shop"),
        "{text}"
    );
    assert!(text.contains("preemption: Always"), "{text}");
    assert!(
        fleet
            .rendered_on("staging-eu-west-1")
            .contains(&"Deployment/inventory".to_string())
    );
    let now_on_prod = fleet.rendered_on("prod-eu-west-1");
    let without = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .filter(|n| *n != "Deployment/inventory")
            .cloned()
            .collect()
    };
    assert_eq!(without(&now_on_prod), without(&on_prod));
    assert!(!now_on_prod.contains(&"Deployment/inventory".to_string()));

    // Its policy now places only it: a second --own-policy is refused, nothing written.
    let again = fleet.run(&yes);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("places only Deployment/shop/inventory already"));
    assert_eq!(fleet.read("karmada-shop.yaml"), text);
}
