//! Offline validation against its oracle: a corpus of built-in objects, generated from the API
//! server's rules (names by kind, label keys and values, annotation keys, counts, ports, a
//! workload's selector against its template), valid neighbours included, each sent to a real
//! kube-apiserver from `cargo xtask testenv` as `kubectl create --dry-run=server` and put
//! alone in a fleet for `flotilla render`. The two must give the same verdict on every
//! object: what the API server accepts flotilla accepts, and what it refuses flotilla
//! refuses with a located error (exit 2). Beside the hand-made corpus, a deterministic
//! generator (proptest's, fixed seed) draws names, label keys and values, counts and ports
//! from alphabets and lengths around the rules, so neighbours nobody thought of are judged too.

mod harness;

use std::process::Command;

use harness::{FleetDir, TestNamespace, env, kubectl_stdin};

/// One object of the corpus: what it varies, and its YAML.
struct Case {
    what: String,
    yaml: String,
}

fn config_map(ns: &str, name: &str, labels: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name:?}\n  namespace: {ns}\n  labels: {labels}\n  annotations: {annotations}\ndata: {{k: v}}\n"
    )
}

fn deployment(ns: &str, name: &str, replicas: i64, selector: &str, port: i64) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name:?}, namespace: {ns}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {selector}}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        ports: [{{containerPort: {port}}}]\n"
    )
}

fn service(ns: &str, name: &str, port: i64, target: i64) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: {name:?}, namespace: {ns}}}\nspec:\n  selector: {{app: web}}\n  ports: [{{port: {port}, targetPort: {target}}}]\n"
    )
}

fn job(ns: &str, name: &str, completions: i64, backoff: i64) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name:?}, namespace: {ns}}}\nspec:\n  completions: {completions}\n  backoffLimit: {backoff}\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: j, image: busybox}}]\n"
    )
}

/// Names that sit on either side of the DNS rules: lengths at the limits, case, leading and
/// trailing dashes, dots, underscores, digits first.
fn names() -> Vec<String> {
    let mut names: Vec<String> = [
        "web", "web-1", "1web", "a.b", "a..b", "-web", "web-", "Web", "web_1", "w", "a.-b", "web.",
        "x.y.z",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.push("a".repeat(63));
    names.push("a".repeat(64));
    names.push(format!("{}.{}", "a".repeat(63), "b".repeat(63)));
    names.push(format!("{}.{}", "a".repeat(63), "b".repeat(64)));
    names.push(["c"; 127].join("."));
    names.push(["c"; 128].join("."));
    names
}

fn corpus(ns: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |what: String, yaml: String| cases.push(Case { what, yaml });
    for name in names() {
        add(
            format!("ConfigMap name {name:?}"),
            config_map(ns, &name, "{}", "{}"),
        );
        add(
            format!("Service name {name:?}"),
            service(ns, &name, 80, 8080),
        );
        add(
            format!("Namespace name {name:?}"),
            format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name:?}}}\n"),
        );
    }
    let keys = [
        "app",
        "app.kubernetes.io/name",
        "Example.com/x",
        "example.com/X_y.z",
        "a/b/c",
        "/x",
        "-x",
        "x-",
        "has space",
        &"k".repeat(63),
        &"k".repeat(64),
    ];
    for (i, key) in keys.iter().enumerate() {
        add(
            format!("label key {key:?}"),
            config_map(
                ns,
                &format!("label-key-{i}"),
                &format!("{{{key:?}: v}}"),
                "{}",
            ),
        );
        add(
            format!("annotation key {key:?}"),
            config_map(
                ns,
                &format!("annotation-key-{i}"),
                "{}",
                &format!("{{{key:?}: any text at all}}"),
            ),
        );
    }
    let values = [
        "",
        "v",
        "v1.2_x-y",
        "-v",
        "v-",
        "has space",
        "a/b",
        &"v".repeat(63),
        &"v".repeat(64),
    ];
    for (i, value) in values.iter().enumerate() {
        add(
            format!("label value {value:?}"),
            config_map(
                ns,
                &format!("label-value-{i}"),
                &format!("{{app: {value:?}}}"),
                "{}",
            ),
        );
    }
    for replicas in [-5, -1, 0, 3] {
        add(
            format!("Deployment replicas {replicas}"),
            deployment(
                ns,
                &format!("replicas{}", replicas + 10),
                replicas,
                "web",
                80,
            ),
        );
    }
    for port in [-1, 0, 1, 65535, 65536] {
        add(
            format!("containerPort {port}"),
            deployment(ns, &format!("port{}", port + 10), 1, "web", port),
        );
    }
    add(
        "a selector the template does not match".into(),
        deployment(ns, "mismatch", 1, "other", 80),
    );
    for (port, target) in [(0, 80), (80, 0), (80, 65536), (65536, 80), (1, 65535)] {
        add(
            format!("Service port {port} targetPort {target}"),
            service(ns, &format!("svc-{port}-{target}"), port, target),
        );
    }
    for (completions, backoff) in [(-1, 0), (0, -1), (0, 0), (2, 6)] {
        add(
            format!("Job completions {completions} backoffLimit {backoff}"),
            job(
                ns,
                &format!("job{}-{}", completions + 5, backoff + 5),
                completions,
                backoff,
            ),
        );
    }
    cases
}

/// Objects drawn by proptest from alphabets and lengths that straddle the API server's rules
/// (a fixed seed: the same corpus every run, so a disagreement can be reproduced).
fn generated(ns: &str) -> Vec<Case> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut draw = |pattern: &str| -> String {
        proptest::string::string_regex(pattern)
            .expect("a valid pattern")
            .new_tree(&mut runner)
            .expect("a value")
            .current()
    };
    let mut cases = Vec::new();
    for i in 0..40 {
        let name = draw("[a-z0-9.\\-_A]{1,70}");
        cases.push(Case {
            what: format!("generated ConfigMap name {name:?}"),
            yaml: config_map(ns, &name, "{}", "{}"),
        });
        let key = draw("([a-z0-9.\\-]{1,12}/)?[a-zA-Z0-9._\\-]{1,66}");
        let value = draw("[a-zA-Z0-9._\\- ]{0,66}");
        cases.push(Case {
            what: format!("generated label {key:?}: {value:?}"),
            yaml: config_map(
                ns,
                &format!("generated-label-{i}"),
                &format!("{{{key:?}: {value:?}}}"),
                "{}",
            ),
        });
        let replicas: i64 = draw("-?[0-3]").parse().unwrap_or(0);
        let port: i64 = draw("-?(0|1|[1-9][0-9]{0,5})").parse().unwrap_or(0);
        cases.push(Case {
            what: format!("generated Deployment replicas {replicas}, containerPort {port}"),
            yaml: deployment(ns, &format!("generated-deploy-{i}"), replicas, "web", port),
        });
    }
    cases
}

/// Whether flotilla's offline load accepts the object: `render` on a fleet holding only it
/// and one cluster.
fn flotilla_accepts(yaml: &str) -> (bool, String) {
    let fleet = FleetDir::new()
        .clusters(
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\nspec: {syncMode: Push}\n",
        )
        .file("object.yaml", yaml);
    let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--fleet")
        .arg(fleet.path())
        .args(["render", "-o", "name"])
        .env("XDG_STATE_HOME", fleet.root())
        .env("XDG_CONFIG_HOME", fleet.root())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    match output.status.code() {
        Some(0) => (true, stderr),
        Some(2) => (false, stderr),
        other => panic!("render exited {other:?}: {stderr}\n{yaml}"),
    }
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn offline_validation_gives_the_api_servers_verdict_on_every_object() {
    let member = env().members[0].clone();
    let ns = TestNamespace::on("validation-oracle", std::slice::from_ref(&member));
    let mut disagreements = Vec::new();
    let mut cases = corpus(&ns.name);
    cases.extend(generated(&ns.name));
    let mut refused = 0;
    for case in &cases {
        let server = kubectl_stdin(
            &member,
            &["create", "--dry-run=server", "-o", "name", "-f", "-"],
            &case.yaml,
        );
        let server_accepts = server.status.success();
        if !server_accepts {
            refused += 1;
        }
        let (ours, message) = flotilla_accepts(&case.yaml);
        if ours != server_accepts {
            disagreements.push(format!(
                "{}: the API server {} ({}), flotilla {} ({})",
                case.what,
                if server_accepts { "accepts" } else { "refuses" },
                String::from_utf8_lossy(&server.stderr).trim(),
                if ours { "accepts" } else { "refuses" },
                message.trim()
            ));
        } else if !ours {
            assert!(
                message.contains("object.yaml:")
                    && message
                        .lines()
                        .next()
                        .is_some_and(|line| line.contains("; ")),
                "{}: a refusal is located and says how to fix it: {message}",
                case.what
            );
        }
    }
    assert!(
        refused > 10 && refused < cases.len() - 10,
        "the corpus holds both verdicts: {refused} of {} refused",
        cases.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} of {} objects get another verdict than the API server's:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
}
