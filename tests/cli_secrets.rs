//! What a person reads from `flotilla render` never holds a Secret's values, through the real
//! binary: masked in JSON, YAML and the table unless `--show-secrets`.

use std::path::Path;
use std::process::{Command, Output};

const FLEET: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
spec: {syncMode: Push}
---
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
stringData: {password: hunter2}
data: {token: c3VwZXJzZWNyZXQ=}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Secret, name: db}]
  placement:
    clusterAffinity: {clusterNames: [m1]}
";

fn render(fleet: &Path, args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--fleet")
        .arg(fleet)
        .arg("render")
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .output()
        .expect("run flotilla")
}

/// The password, the token, and their base64.
fn leaks(text: &str) -> bool {
    ["hunter2", "aHVudGVyMg==", "supersecret", "c3VwZXJzZWNyZXQ="]
        .iter()
        .any(|value| text.contains(value))
}

#[test]
fn render_masks_secret_values_unless_asked_to_show_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("fleet.yaml"), FLEET).expect("write the fleet");
    for format in ["json", "yaml", "table"] {
        let output = render(dir.path(), &["-o", format]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{format}: {stderr}");
        assert!(
            !leaks(&stdout) && !leaks(&stderr),
            "{format}: {stdout}{stderr}"
        );
        if format != "table" {
            assert!(stdout.contains("***"), "{format}: {stdout}");
        }
    }
    let output = render(dir.path(), &["-o", "json"]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let secret = value["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["object"]["kind"] == "Secret"))
        .expect("the Secret is rendered");
    assert_eq!(secret["object"]["data"]["password"], "***");
    assert_eq!(secret["object"]["data"]["token"], "***");

    let output = render(dir.path(), &["-o", "json", "--show-secrets"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout.contains("c3VwZXJzZWNyZXQ="), "{stdout}");
    assert!(
        stdout.contains("hunter2") || stdout.contains("aHVudGVyMg=="),
        "{stdout}"
    );
}
