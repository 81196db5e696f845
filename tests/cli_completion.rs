//! Shell completion through the real binary and the real `bash`: commands, and the values only
//! this fleet knows — kubeconfig contexts (from `--kubeconfig` or `$KUBECONFIG`), the fleet's
//! cluster names and its `KIND/NS/NAME` resources (from `--fleet` or `./fleet`). Completing
//! reads files only and prints nothing but candidates.

mod harness;

use std::path::{Path, PathBuf};

use harness::completion::bash_candidates;

/// A kubeconfig whose servers no test can reach: completing must not try.
fn kubeconfig(dir: &Path, file: &str, contexts: &[&str]) -> PathBuf {
    let mut text = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: far\n  cluster:\n    server: https://10.255.255.1:6443\nusers:\n- name: someone\n  user: {}\ncontexts:\n",
    );
    for context in contexts {
        text.push_str(&format!(
            "- name: {context}\n  context:\n    cluster: far\n    user: someone\n"
        ));
    }
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write kubeconfig");
    path
}

fn copy_fleet(from: &str, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir fleet");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(from);
    for entry in std::fs::read_dir(source).expect("read fleet") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, to.join(path.file_name().expect("file name"))).expect("copy");
    }
}

#[test]
fn a_command_name_completes_from_its_first_letters() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_eq!(
        bash_candidates(dir.path(), None, &["dri"]),
        vec!["drift".to_string()]
    );
    let mut pl = bash_candidates(dir.path(), None, &["pl"]);
    pl.sort();
    assert_eq!(pl, vec!["placement".to_string(), "plan".to_string()]);
    assert_eq!(
        bash_candidates(dir.path(), None, &["plan", "--pru"]),
        vec!["--prune".to_string()]
    );
}

#[test]
fn context_values_come_from_the_kubeconfig_the_line_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = kubeconfig(
        dir.path(),
        "kc",
        &["hub", "member-a", "member-b", "staging"],
    );
    let file = file.to_str().expect("utf-8 path");
    assert_eq!(
        bash_candidates(
            dir.path(),
            None,
            &["--kubeconfig", file, "plan", "--context", "m"]
        ),
        vec!["member-a".to_string(), "member-b".to_string()]
    );
    // --hub takes a context too, and --kubeconfig may come after the command.
    assert_eq!(
        bash_candidates(
            dir.path(),
            None,
            &["clusters", "--kubeconfig", file, "--hub", "h"]
        ),
        vec!["hub".to_string()]
    );
}

#[test]
fn context_values_merge_the_kubeconfig_files_of_kubeconfig_env_and_skip_missing_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = kubeconfig(dir.path(), "one", &["east-1"]);
    let second = kubeconfig(dir.path(), "two", &["east-2", "west-1"]);
    let missing = dir.path().join("missing");
    let list = std::env::join_paths([first, missing, second]).expect("join paths");
    assert_eq!(
        bash_candidates(
            dir.path(),
            Some(Path::new(&list)),
            &["status", "--context", "e"]
        ),
        vec!["east-1".to_string(), "east-2".to_string()]
    );
}

#[test]
fn cluster_and_resource_values_come_from_the_fleet_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The default ./fleet for --cluster …
    copy_fleet(
        "testdata/fleets/karmada-placement",
        &dir.path().join("fleet"),
    );
    let clusters = bash_candidates(dir.path(), None, &["plan", "--cluster", "m"]);
    assert_eq!(clusters, ["m1", "m2", "m3", "m4", "m5", "m6"]);
    // … and --fleet DIR for resources, as a flag and as an editor's positional argument.
    copy_fleet("testdata/fleets/kubefed", &dir.path().join("other"));
    let resources = bash_candidates(
        dir.path(),
        None,
        &["--fleet", "other", "status", "--resource", ""],
    );
    assert!(!resources.is_empty());
    assert!(
        resources.iter().all(|r| r.split('/').count() >= 2),
        "{resources:?}"
    );
    let in_default = bash_candidates(dir.path(), None, &["status", "--resource", ""]);
    assert_ne!(resources, in_default, "--fleet was not honoured");
    let positional = bash_candidates(dir.path(), None, &["placement", "set", "Deployment/p/div"]);
    assert_eq!(
        positional,
        ["Deployment/p/divided", "Deployment/p/divided-few"]
    );
}

#[test]
fn nothing_to_read_gives_no_candidates_and_no_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("broken"), "contexts: [[[").expect("write");
    for words in [
        &["--kubeconfig", "broken", "plan", "--context", ""][..],
        &["--kubeconfig", "absent", "plan", "--context", ""],
        &["--fleet", "absent", "plan", "--cluster", ""],
        &["--fleet", "absent", "override", "list", "D"],
    ] {
        assert_eq!(
            bash_candidates(dir.path(), None, words),
            Vec::<String>::new(),
            "{words:?}"
        );
    }
}
