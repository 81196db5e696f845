//! Nothing lost: fleet edits through the real binary on a generated fleet directory, under
//! concurrency and crashes. Many `placement set`, `override add` and `undo` processes and an
//! outside writer run on one fleet file at once: every command that said it wrote has its
//! change in the files (unless an undo that said so took it back), every other one exited 4
//! (or 2 with a reason), the fleet loads, and the journal and audit log parse. A write killed
//! at each of its steps leaves the file old or new, and `undo` consistent with it. Nothing here
//! reaches a cluster.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod harness;

use harness::FleetDir;

const TEMPLATES: usize = 8;

/// A fleet directory (Karmada dialect) with its own state and config directories: clusters
/// m1..m4, ConfigMaps cm0..cm7 in namespace `p`, each claimed by a policy of its own placing it
/// on m1, all in one file.
struct Fleet {
    dir: FleetDir,
}

impl Fleet {
    fn new() -> Fleet {
        let clusters: Vec<String> = (1..=4)
            .map(|n| {
                format!(
                    "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: m{n}, labels: {{env: prod}}}}\nspec: {{syncMode: Push}}\n"
                )
            })
            .collect();
        let mut text = String::from("# templates and their policies\n");
        for i in 0..TEMPLATES {
            text.push_str(&format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: p}}\ndata: {{k: v}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: cm{i}, namespace: p}}\nspec:\n  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: cm{i}}}]\n  placement:\n    clusterAffinity: {{clusterNames: [m1]}}\n"
            ));
        }
        Fleet {
            dir: FleetDir::new().clusters(clusters.join("---\n")).fleet(text),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    fn read(&self, name: &str) -> String {
        self.dir.read(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
        command
            .arg("--fleet")
            .arg(self.path())
            .args(args)
            .env("XDG_STATE_HOME", self.dir.beside("state"))
            .env("XDG_CONFIG_HOME", self.dir.beside("config"))
            .env_remove("KUBECONFIG")
            .env_remove("FLOTILLA_CRASH_AT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run flotilla")
    }

    /// The `data.k` of each ConfigMap `render` places on `cluster`, by name.
    fn rendered(&self, cluster: &str) -> Vec<(String, String)> {
        let output = self.run(&["render", "--cluster", cluster, "-o", "json"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let value: Value = serde_json::from_slice(&output.stdout).expect("render JSON");
        value["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| &item["object"])
            .filter(|object| object["kind"] == "ConfigMap")
            .map(|object| {
                (
                    object["metadata"]["name"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    object["data"]["k"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    fn state(&self, name: &str) -> PathBuf {
        self.dir.beside("state/flotilla").join(name)
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

/// Every line of a JSON Lines file parses.
fn assert_json_lines(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    for (n, line) in text.lines().enumerate() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "{}:{}: {line}",
            path.display(),
            n + 1
        );
    }
}

/// Takes the directory's write lock as a flotilla would, prepends a ConfigMap to the file
/// (shifting every document's index) and changes a comment, then lets go.
fn outside_write(fleet: &Path, n: usize) {
    let dir = std::fs::File::open(fleet).expect("open dir");
    dir.lock().expect("lock");
    let path = fleet.join("fleet.yaml");
    let text = std::fs::read_to_string(&path).expect("read");
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: outside-{n}, namespace: q}}\ndata: {{k: pulled}}\n---\n{}",
        text.replacen(
            "# templates and their policies",
            &format!("# templates and their policies ({n})"),
            1
        )
    );
    let temp = fleet.join(".outside.tmp");
    let mut file = std::fs::File::create(&temp).expect("temp");
    file.write_all(text.as_bytes()).expect("write");
    file.sync_all().expect("sync");
    std::fs::rename(&temp, &path).expect("rename");
    drop(dir);
}

#[test]
fn concurrent_edits_undos_and_an_outside_writer_lose_nothing() {
    for round in 0..3 {
        let fleet = Fleet::new();
        let mut children = Vec::new();
        for i in 0..TEMPLATES {
            let name = format!("ConfigMap/p/cm{i}");
            let args: Vec<String> = if i % 3 == 2 {
                let patch = format!(r#"{{"op":"replace","path":"/data/k","value":"o{i}"}}"#);
                [
                    "override",
                    "add",
                    &name,
                    "--cluster",
                    "m1",
                    "--json-patch",
                    &patch,
                    "--yes",
                    "-o",
                    "json",
                ]
                .map(String::from)
                .to_vec()
            } else {
                [
                    "placement",
                    "set",
                    &name,
                    "--add-cluster",
                    "m2",
                    "--yes",
                    "-o",
                    "json",
                ]
                .map(String::from)
                .to_vec()
            };
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            children.push((i, false, fleet.command(&refs).spawn().expect("spawn")));
            if i % 4 == 3 {
                let undo = fleet.command(&["undo", "--yes", "-o", "json"]);
                children.push((i, true, { undo }.spawn().expect("spawn")));
            }
        }
        let outside = {
            let path = fleet.path();
            std::thread::spawn(move || {
                for n in 0..3 {
                    std::thread::sleep(std::time::Duration::from_millis(15 * n as u64));
                    outside_write(&path, n);
                }
            })
        };
        let mut edited = BTreeSet::new();
        let mut undone = BTreeSet::new();
        for (i, is_undo, child) in children {
            let output = child.wait_with_output().expect("wait");
            let code = output.status.code();
            let message = stderr(&output);
            match code {
                Some(0) => {
                    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
                    if is_undo {
                        if let Some(resource) = report["resource"].as_str() {
                            undone.insert(resource.to_string());
                        }
                    } else {
                        assert_eq!(report["written"], true, "round {round} cm{i}: {report}");
                        edited.insert(format!("ConfigMap/p/cm{i}"));
                    }
                }
                Some(4) => assert!(
                    message.contains("the fleet changed under the edit"),
                    "round {round}: exit 4 without its reason: {message}"
                ),
                Some(2) => assert!(
                    message.contains("error:"),
                    "round {round}: exit 2 without a reason: {message}"
                ),
                other => {
                    panic!("round {round}: cm{i} (undo: {is_undo}) exited {other:?}: {message}")
                }
            }
        }
        outside.join().expect("outside writer");

        let on_m1 = fleet.rendered("m1");
        let on_m2: BTreeSet<String> = fleet.rendered("m2").into_iter().map(|(n, _)| n).collect();
        for i in 0..TEMPLATES {
            let key = format!("ConfigMap/p/cm{i}");
            let name = format!("cm{i}");
            let expected = edited.contains(&key) && !undone.contains(&key);
            if i % 3 == 2 {
                let value = on_m1
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.as_str());
                assert_eq!(
                    value == Some(&format!("o{i}")),
                    expected,
                    "round {round}: the override of {key} (edited {}, undone {}): {value:?}",
                    edited.contains(&key),
                    undone.contains(&key)
                );
            } else {
                assert_eq!(
                    on_m2.contains(&name),
                    expected,
                    "round {round}: {key} on m2 (edited {}, undone {})",
                    edited.contains(&key),
                    undone.contains(&key)
                );
            }
        }
        // The outside writer's documents and comment are all still there.
        let text = fleet.read("fleet.yaml");
        for n in 0..3 {
            assert!(text.contains(&format!("name: outside-{n},")), "{text}");
        }
        assert!(
            text.contains("# templates and their policies (2)"),
            "{text}"
        );
        assert!(
            !edited.is_empty(),
            "round {round}: no edit succeeded at all"
        );
        assert_json_lines(&fleet.state("journal.jsonl"));
        assert_json_lines(&fleet.state("audit.log"));
    }
}

/// A write ended at `step` by `FLOTILLA_CRASH_AT` (an abort, as a kill would end it).
fn crashed_edit(fleet: &Fleet, step: &str) -> Output {
    fleet
        .command(&[
            "placement",
            "set",
            "ConfigMap/p/cm0",
            "--add-cluster",
            "m3",
            "--yes",
        ])
        .env("FLOTILLA_CRASH_AT", step)
        .output()
        .expect("run flotilla")
}

#[test]
fn a_write_killed_at_any_step_leaves_the_file_old_or_new_and_undo_consistent() {
    for step in ["before-journal", "after-journal", "after-rename"] {
        let fleet = Fleet::new();
        let old = fleet.read("fleet.yaml");
        let output = crashed_edit(&fleet, step);
        assert!(
            !output.status.success(),
            "{step}: the crash hook did not fire"
        );
        let now = fleet.read("fleet.yaml");
        let on_m3 = |fleet: &Fleet| fleet.rendered("m3").iter().any(|(n, _)| n == "cm0");
        let undo = fleet.run(&["undo", "--yes", "-o", "json"]);
        assert_eq!(undo.status.code(), Some(0), "{step}: {}", stderr(&undo));
        if step == "after-rename" {
            assert_ne!(now, old, "{step}: the rename happened");
            let report: Value = serde_json::from_slice(&undo.stdout).expect("undo JSON");
            assert_eq!(report["written"], true, "{step}: {report}");
            assert_eq!(
                fleet.read("fleet.yaml"),
                old,
                "{step}: undo restores the old text"
            );
        } else {
            assert_eq!(now, old, "{step}: the file is untouched");
            assert!(
                stderr(&undo).contains("nothing to undo"),
                "{step}: an entry whose write never landed is passed over: {}",
                stderr(&undo)
            );
            assert_eq!(fleet.read("fleet.yaml"), old);
        }
        assert!(!on_m3(&fleet), "{step}: cm0 is not on m3 after the undo");
        // No temporary file is left that the loader or a person would trip over.
        let names: Vec<String> = std::fs::read_dir(fleet.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .filter(|n| n.contains("flotilla-tmp"))
            .collect();
        assert!(names.len() <= 1, "{step}: {names:?}");
        assert_json_lines(&fleet.state("journal.jsonl"));
    }
}

#[test]
fn an_edit_whose_document_changed_under_it_exits_4_and_keeps_the_outside_change() {
    let fleet = Fleet::new();
    let path = fleet.path().join("fleet.yaml");
    // Hold the directory's lock, as a writer under way does: the command loads the fleet,
    // computes its edit, and waits for the lock; meanwhile the very policy it edits changes.
    let dir = std::fs::File::open(fleet.path()).expect("open dir");
    dir.lock().expect("lock");
    let child = fleet
        .command(&[
            "placement",
            "set",
            "ConfigMap/p/cm1",
            "--add-cluster",
            "m2",
            "--yes",
        ])
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let text = std::fs::read_to_string(&path).expect("read");
    let theirs = text.replacen(
        "name: cm1, namespace: p}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cm1}]\n  placement:\n    clusterAffinity: {clusterNames: [m1]}",
        "name: cm1, namespace: p}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cm1}]\n  placement:\n    clusterAffinity: {clusterNames: [m1, m4]}",
        1,
    );
    assert_ne!(theirs, text);
    std::fs::write(&path, &theirs).expect("write");
    drop(dir);
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("PropagationPolicy p/cm1"), "{message}");
    assert!(message.contains("run the command again"), "{message}");
    assert_eq!(
        fleet.read("fleet.yaml"),
        theirs,
        "their change is kept, nothing written"
    );
    // Run again, it edits the fleet as it is now.
    let again = fleet.run(&[
        "placement",
        "set",
        "ConfigMap/p/cm1",
        "--add-cluster",
        "m2",
        "--yes",
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        fleet.read("fleet.yaml").contains("m4"),
        "{}",
        fleet.read("fleet.yaml")
    );
}

#[test]
fn undo_refuses_when_the_document_it_wrote_changed_since_and_keeps_that_change() {
    let fleet = Fleet::new();
    let path = fleet.path().join("fleet.yaml");
    let first = fleet.run(&[
        "placement",
        "set",
        "ConfigMap/p/cm1",
        "--add-cluster",
        "m2",
        "--yes",
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let text = std::fs::read_to_string(&path).expect("read");
    // The edit left the flow list flow: someone adds m4 to it.
    let theirs = text.replacen("m2]", "m2, m4]", 1);
    assert_ne!(
        theirs, text,
        "the policy reads as flotilla wrote it: {text}"
    );
    std::fs::write(&path, &theirs).expect("write");
    let undo = fleet.run(&["undo", "--yes"]);
    assert_eq!(undo.status.code(), Some(2), "{}", stderr(&undo));
    assert!(stderr(&undo).contains("changed since"), "{}", stderr(&undo));
    assert_eq!(fleet.read("fleet.yaml"), theirs, "their change is kept");
}

#[test]
fn readonly_refuses_every_writing_command_with_one_message_and_writes_nothing() {
    let fleet = Fleet::new();
    let before = fleet.read("fleet.yaml");
    let writers: [&[&str]; 8] = [
        &[
            "placement",
            "set",
            "ConfigMap/p/cm0",
            "--add-cluster",
            "m2",
            "--yes",
        ],
        &[
            "override",
            "add",
            "ConfigMap/p/cm0",
            "--cluster",
            "m1",
            "--json-patch",
            r#"{"op":"replace","path":"/data/k","value":"x"}"#,
            "--yes",
        ],
        &[
            "override",
            "remove",
            "ConfigMap/p/cm0",
            "--rule",
            "1",
            "--yes",
        ],
        &["undo", "--yes"],
        &[
            "repair",
            "--ignore",
            "--resource",
            "ConfigMap/p/cm0",
            "--path",
            "/data/k",
            "--yes",
        ],
        &["repair", "--adopt", "--yes"],
        &["repair", "--revert", "--yes"],
        &["apply", "--yes"],
    ];
    for args in writers {
        let mut all = vec!["--readonly"];
        all.extend_from_slice(args);
        let output = fleet.run(&all);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("--readonly forbids every write"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert_eq!(fleet.read("fleet.yaml"), before);
    let names: Vec<String> = std::fs::read_dir(fleet.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(names.len(), 2, "no file created: {names:?}");
    // A dry run and the reading commands still work.
    let dry = fleet.run(&[
        "--readonly",
        "placement",
        "set",
        "ConfigMap/p/cm0",
        "--add-cluster",
        "m2",
        "--dry-run",
    ]);
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    assert_eq!(fleet.run(&["--readonly", "render"]).status.code(), Some(0));
}

#[test]
fn an_edit_preview_labels_its_sides_as_the_fleet_before_and_after_not_as_a_cluster() {
    let fleet = Fleet::new();
    let output = fleet.run(&[
        "placement",
        "set",
        "ConfigMap/p/cm0",
        "--add-cluster",
        "m2",
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let diff = report["diffs"][0]["diff"].as_str().unwrap_or_default();
    assert!(
        diff.starts_with("--- before/ConfigMap/p/cm0\n+++ after/ConfigMap/p/cm0\n"),
        "{diff}"
    );
}
