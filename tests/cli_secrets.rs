//! What a person reads from flotilla never holds a Secret's values, through the real binary on
//! fleets built in temp dirs: `render` masks them in JSON, YAML and the table unless
//! `--show-secrets`; and by class of Secret-shaped value (a v1 Secret's `data`/`stringData`, a
//! KubeFed FederatedSecret's template, an override value aimed at a Secret, the last-applied
//! annotation of a Secret-shaped object, an error in a Secret's value) the editing commands'
//! dry runs, `override list` and errors print the keys and the rest of the change, never the
//! values.

use std::path::Path;
use std::process::{Command, Output};

mod harness;

use harness::FleetDir;

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
    let dir = FleetDir::new().fleet(FLEET);
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

/// A fleet directory with one file, and its own state directory (the edit journal).
struct Fleet {
    dir: FleetDir,
}

impl Fleet {
    fn new(text: &str) -> Fleet {
        Fleet {
            dir: FleetDir::new().fleet(text),
        }
    }

    fn read(&self) -> String {
        self.dir.read("fleet.yaml")
    }

    /// Runs flotilla on this fleet without a terminal; stdout and stderr together.
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("--fleet")
            .arg(self.dir.path())
            .args(args)
            .env("XDG_STATE_HOME", self.dir.beside("state"))
            .env("XDG_CONFIG_HOME", self.dir.beside("config"))
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run flotilla");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Runs `args` in the table and in `-o json`, asserts the exit code and that none of
    /// `secrets` is printed on either stream, and returns the table's and the JSON's stdout.
    fn masked(&self, args: &[&str], code: i32, secrets: &[&str]) -> (String, serde_json::Value) {
        let before = self.read();
        let mut outputs = Vec::new();
        for format in ["table", "json"] {
            let mut all = args.to_vec();
            all.extend(["-o", format]);
            let (status, stdout, stderr) = self.run(&all);
            assert_eq!(status, Some(code), "{args:?} -o {format}: {stdout}{stderr}");
            for secret in secrets {
                assert!(
                    !stdout.contains(secret) && !stderr.contains(secret),
                    "{args:?} -o {format} prints {secret}: {stdout}{stderr}"
                );
            }
            outputs.push(stdout);
        }
        assert_eq!(self.read(), before, "{args:?}: nothing is written");
        let json = serde_json::from_str(&outputs[1])
            .unwrap_or_else(|err| panic!("{args:?}: not JSON ({err}): {}", outputs[1]));
        (outputs.remove(0), json)
    }

    /// `render` in every format prints none of `secrets`.
    fn render_masked(&self, secrets: &[&str]) {
        for format in ["json", "yaml", "table"] {
            let (status, stdout, stderr) = self.run(&["render", "-o", format]);
            assert_eq!(status, Some(0), "{format}: {stderr}");
            for secret in secrets {
                assert!(
                    !stdout.contains(secret) && !stderr.contains(secret),
                    "render -o {format} prints {secret}: {stdout}{stderr}"
                );
            }
        }
    }
}

/// The last-applied annotation `kubectl apply` would keep of an object, as a YAML line.
fn last_applied(object: serde_json::Value) -> String {
    let text = object.to_string();
    format!(
        "    kubectl.kubernetes.io/last-applied-configuration: {}\n",
        serde_json::Value::String(text)
    )
}

const KARMADA_CLUSTERS: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
spec: {syncMode: Push}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m2}
spec: {syncMode: Push}
---
";

/// A v1 Secret (with a last-applied copy of itself), placed on m1, and an OverridePolicy that
/// writes a value into it on m2 and a label beside it.
fn karmada_fleet() -> String {
    let applied = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop"},
        "stringData": {"password": "applied-pw-4411"},
    });
    format!(
        "{KARMADA_CLUSTERS}apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
{}stringData: {{password: hunter2}}
data: {{token: c3VwZXJzZWNyZXQ=}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: db, namespace: shop}}
spec:
  resourceSelectors: [{{apiVersion: v1, kind: Secret, name: db}}]
  placement:
    clusterAffinity: {{clusterNames: [m1, m2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {{name: db-m2, namespace: shop}}
spec:
  resourceSelectors: [{{apiVersion: v1, kind: Secret, name: db}}]
  overrideRules:
  - targetCluster: {{clusterNames: [m2]}}
    overriders:
      plaintext:
      - {{path: /stringData/password, operator: replace, value: m2-override-pw-5522}}
      labelsOverrider:
      - {{operator: add, value: {{tier: gold-on-m2}}}}
",
        last_applied(applied)
    )
}

const KARMADA_SECRETS: &[&str] = &[
    "hunter2",
    "aHVudGVyMg==",
    "supersecret",
    "c3VwZXJzZWNyZXQ=",
    "applied-pw-4411",
    "m2-override-pw-5522",
    "new-pin-6633",
];

#[test]
fn a_v1_secret_and_the_overrides_aimed_at_it_are_masked_in_every_edit_and_list() {
    let fleet = Fleet::new(&karmada_fleet());
    fleet.render_masked(KARMADA_SECRETS);
    // placement set: the Secret shares its file with the policy edited; the diff still shows.
    let (table, json) = fleet.masked(
        &[
            "placement",
            "set",
            "Secret/shop/db",
            "--remove-cluster",
            "m2",
            "--yes",
            "--dry-run",
        ],
        1,
        KARMADA_SECRETS,
    );
    assert_eq!(json["lost"], serde_json::json!(["m2"]));
    let file_diff = json["fileDiff"].as_str().unwrap_or_default();
    assert!(
        file_diff.contains("-    clusterAffinity: {clusterNames: [m1, m2]}"),
        "{file_diff}"
    );
    assert!(table.contains("leaves"), "{table}");
    // override add: the value written into the Secret is masked; the key shows.
    let (table, json) = fleet.masked(
        &[
            "override",
            "add",
            "Secret/shop/db",
            "--cluster",
            "m1",
            "--json-patch",
            r#"{"op":"add","path":"/stringData/pin","value":"new-pin-6633"}"#,
            "--dry-run",
        ],
        1,
        KARMADA_SECRETS,
    );
    assert_eq!(json["changed"], serde_json::json!(["m1"]));
    let file_diff = json["fileDiff"].as_str().unwrap_or_default();
    assert!(file_diff.contains("/stringData/pin"), "{file_diff}");
    assert!(file_diff.contains("***"), "{file_diff}");
    let object_diff = json["diffs"][0]["diff"].as_str().unwrap_or_default();
    assert!(object_diff.contains("pin"), "{object_diff}");
    assert!(table.contains("/stringData/pin"), "{table}");
    // A label override on the same Secret is no Secret value: it shows.
    let (_, json) = fleet.masked(
        &[
            "override",
            "add",
            "Secret/shop/db",
            "--cluster",
            "m1",
            "--label",
            "tier=plain-label-value",
            "--dry-run",
        ],
        1,
        KARMADA_SECRETS,
    );
    assert!(
        json["fileDiff"]
            .as_str()
            .unwrap_or_default()
            .contains("plain-label-value"),
        "{json}"
    );
    // override list: the rule aimed at the Secret is masked, the label beside it shows.
    let (table, json) = fleet.masked(&["override", "list", "Secret/shop/db"], 0, KARMADA_SECRETS);
    assert!(
        table.contains("/stringData/password") && table.contains("gold-on-m2"),
        "{table}"
    );
    let overriders = json["items"][0]["overriders"].to_string();
    assert!(overriders.contains("/stringData/password"), "{overriders}");
    assert!(overriders.contains("***"), "{overriders}");
    // … unless asked to show them.
    let (status, stdout, _) = fleet.run(&[
        "override",
        "list",
        "Secret/shop/db",
        "-o",
        "json",
        "--show-secrets",
    ]);
    assert_eq!(status, Some(0));
    assert!(stdout.contains("m2-override-pw-5522"), "{stdout}");
}

const KUBEFED_CLUSTERS: &str = "\
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: k1, namespace: kube-federation-system}
spec: {apiEndpoint: \"https://k1:6443\", secretRef: {name: k1}}
---
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: k2, namespace: kube-federation-system}
spec: {apiEndpoint: \"https://k2:6443\", secretRef: {name: k2}}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedNamespace
metadata: {name: shop, namespace: shop}
spec:
  placement: {clusterSelector: {}}
---
";

/// A FederatedSecret (with its own last-applied copy) on k1, whose override on k1 writes a
/// password, and a long label value that must not be cut in JSON.
fn kubefed_fleet() -> String {
    let applied = serde_json::json!({
        "apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedSecret",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"template": {"stringData": {"password": "fed-applied-pw-7744"}}},
    });
    format!(
        "{KUBEFED_CLUSTERS}apiVersion: types.kubefed.io/v1beta1
kind: FederatedSecret
metadata:
  name: db
  namespace: shop
  annotations:
{}spec:
  template:
    stringData: {{password: fed-template-pw-8855}}
    data: {{token: ZmVkLXRva2Vu}}
  placement:
    clusters: [{{name: k1}}]
  overrides:
  - clusterName: k1
    clusterOverrides:
    - {{path: /stringData/password, value: fed-k1-pw-9966}}
    - {{op: add, path: /metadata/labels, value: {{note: a-label-value-long-enough-to-be-cut-in-the-table-but-never-in-json}}}}
",
        last_applied(applied)
    )
}

const KUBEFED_SECRETS: &[&str] = &[
    "fed-applied-pw-7744",
    "fed-template-pw-8855",
    "ZmVkLXRva2Vu",
    "fed-token",
    "fed-k1-pw-9966",
    "fed-new-pin-1177",
];

#[test]
fn a_federated_secret_template_and_its_overrides_are_masked_in_every_edit_and_list() {
    let fleet = Fleet::new(&kubefed_fleet());
    fleet.render_masked(KUBEFED_SECRETS);
    let (table, json) = fleet.masked(
        &[
            "placement",
            "set",
            "Secret/shop/db",
            "--add-cluster",
            "k2",
            "--dry-run",
        ],
        1,
        KUBEFED_SECRETS,
    );
    assert_eq!(json["gained"], serde_json::json!(["k2"]));
    let file_diff = json["fileDiff"].as_str().unwrap_or_default();
    assert!(file_diff.contains("+    - name: k2"), "{file_diff}");
    assert!(table.contains("gains"), "{table}");
    let (_, json) = fleet.masked(
        &[
            "override",
            "add",
            "Secret/shop/db",
            "--cluster",
            "k1",
            "--json-patch",
            r#"{"op":"add","path":"/stringData/pin","value":"fed-new-pin-1177"}"#,
            "--dry-run",
        ],
        1,
        KUBEFED_SECRETS,
    );
    let file_diff = json["fileDiff"].as_str().unwrap_or_default();
    assert!(file_diff.contains("path: /stringData/pin"), "{file_diff}");
    assert!(file_diff.contains("***"), "{file_diff}");
    // override list: masked in both formats; JSON never cuts a value.
    let (table, json) = fleet.masked(&["override", "list", "Secret/shop/db"], 0, KUBEFED_SECRETS);
    assert!(table.contains("/stringData/password"), "{table}");
    let items = json["items"].to_string();
    assert!(
        items.contains("replace /stringData/password = \\\"***\\\""),
        "{items}"
    );
    assert!(
        items.contains("a-label-value-long-enough-to-be-cut-in-the-table-but-never-in-json"),
        "{items}"
    );
    // override remove of the rule that writes the password: its value stays masked.
    fleet.masked(
        &[
            "override",
            "remove",
            "Secret/shop/db",
            "--rule",
            "1",
            "--dry-run",
        ],
        1,
        KUBEFED_SECRETS,
    );
}

#[test]
fn an_edit_written_and_undone_prints_no_secret_value() {
    let fleet = Fleet::new(&kubefed_fleet());
    let (status, stdout, stderr) = fleet.run(&[
        "override",
        "add",
        "Secret/shop/db",
        "--cluster",
        "k1",
        "--json-patch",
        r#"{"op":"add","path":"/stringData/pin","value":"fed-new-pin-1177"}"#,
        "-o",
        "json",
    ]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        fleet.read().contains("fed-new-pin-1177"),
        "the value is written"
    );
    for secret in KUBEFED_SECRETS {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{stdout}{stderr}"
        );
    }
    for args in [&["undo", "--dry-run"][..], &["undo", "--yes"][..]] {
        let (_, stdout, stderr) = fleet.run(args);
        for secret in KUBEFED_SECRETS {
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "{args:?}: {stdout}{stderr}"
            );
        }
    }
    assert!(
        !fleet.read().contains("fed-new-pin-1177"),
        "the undo is written"
    );
}

#[test]
fn errors_in_a_secret_value_name_the_field_and_line_never_the_value() {
    let cases = [
        (
            format!(
                "{KARMADA_CLUSTERS}apiVersion: v1\nkind: Secret\nmetadata: {{name: db, namespace: shop}}\nstringData: {{pin: 987654}}\n"
            ),
            "fleet.yaml:14: stringData.pin",
        ),
        (
            format!(
                "{KARMADA_CLUSTERS}apiVersion: v1\nkind: Secret\nmetadata: {{name: db, namespace: shop}}\ndata:\n  pin: 987654\n"
            ),
            "fleet.yaml:15: data.pin",
        ),
        (
            format!(
                "{KUBEFED_CLUSTERS}apiVersion: types.kubefed.io/v1beta1\nkind: FederatedSecret\nmetadata: {{name: db, namespace: shop}}\nspec:\n  template:\n    stringData:\n      pin: 987654\n  placement:\n    clusters: [{{name: k1}}]\n"
            ),
            "fleet.yaml:23: spec.template.stringData.pin",
        ),
    ];
    for (text, located) in cases {
        let fleet = Fleet::new(&text);
        for args in [
            &["render", "-o", "json"][..],
            &["render", "--keep-going"][..],
            &[
                "placement",
                "set",
                "Secret/shop/db",
                "--add-cluster",
                "m2",
                "--dry-run",
            ][..],
        ] {
            let (status, stdout, stderr) = fleet.run(args);
            assert_eq!(status, Some(2), "{args:?}: {stdout}{stderr}");
            assert!(stderr.contains(located), "{args:?}: {stderr}");
            assert!(
                stderr.contains("expects a"),
                "the type it expects: {stderr}"
            );
            assert!(
                !stdout.contains("987654") && !stderr.contains("987654"),
                "{args:?}: {stdout}{stderr}"
            );
        }
    }
    // A JSON patch of the wrong type for a Secret's value quotes neither value.
    let fleet = Fleet::new(&karmada_fleet());
    let (status, stdout, stderr) = fleet.run(&[
        "override",
        "add",
        "Secret/shop/db",
        "--cluster",
        "m1",
        "--json-patch",
        r#"{"op":"replace","path":"/stringData/password","value":987654}"#,
        "--dry-run",
    ]);
    assert_eq!(status, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("/stringData/password holds a string"),
        "{stderr}"
    );
    for secret in ["987654", "hunter2"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "{stdout}{stderr}"
        );
    }
}
