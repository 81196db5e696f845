//! Fleet data never drives the terminal: names with escape sequences are printed escaped in
//! `render`'s table and in its error messages, and in the rows and error lines of `plan`,
//! `apply`, `drift` and `repair`, through the real binary.

use std::path::Path;
use std::process::{Command, Output};

mod harness;

use harness::FleetDir;

const EVIL: &str = "web\u{1b}]0;pwned\u{7}";

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

/// A fleet placing one object named `object` on the cluster named `cluster`. The object is of
/// a custom kind: a built-in kind's name is held to the API server's DNS rules, which a name
/// with an escape sequence breaks (that error is escaped too, below).
fn fleet(object: &str, cluster: &str) -> String {
    format!(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: \"{cluster}\"}}\nspec: {{syncMode: Push}}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: \"{object}\", namespace: shop}}\nspec: {{k: v}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: p, namespace: shop}}\nspec:\n  resourceSelectors: [{{apiVersion: example.com/v1, kind: Widget, name: \"{object}\"}}]\n  placement: {{clusterAffinity: {{clusterNames: [m1]}}}}\n"
    )
}

/// The name as YAML writes it in a double-quoted scalar.
fn yaml_escaped(text: &str) -> String {
    text.replace('\u{1b}', "\\e").replace('\u{7}', "\\a")
}

#[test]
fn an_escape_sequence_in_a_name_is_escaped_in_the_table_and_in_errors() {
    let evil = yaml_escaped(EVIL);
    let dir = FleetDir::new().fleet(fleet(&evil, &evil));
    let output = render(dir.path(), &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("web\\u{1b}]0;pwned\\u{7}"), "{stdout}");
    assert!(
        !output.stdout.contains(&0x1b) && !output.stdout.contains(&0x07),
        "{stdout}"
    );

    // An error that quotes the fleet's cluster names.
    let output = render(dir.path(), &["--cluster", "nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!output.stderr.contains(&0x1b) && !output.stderr.contains(&0x07));
    assert!(String::from_utf8_lossy(&output.stderr).contains("\\u{1b}"));

    // A built-in object whose name carries one breaks the API server's name rule: the error
    // quotes the name escaped.
    let named = FleetDir::new().fleet(format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: \"{evil}\", namespace: shop}}\n"
    ));
    let output = render(named.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!output.stderr.contains(&0x1b) && !output.stderr.contains(&0x07));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("ConfigMap name \"web\\u{1b}"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // A file whose name carries an escape sequence, with an error in it.
    let bad = FleetDir::new().file(
        &format!("{EVIL}.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [oops]}\n",
    );
    let output = render(bad.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        !output.stderr.contains(&0x1b) && !output.stderr.contains(&0x07),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `plan`, `apply`, `drift` and `repair` name the object in their rows and error lines; a
/// cluster that refuses connections makes each of them print it.
#[test]
fn an_escape_sequence_in_a_name_is_escaped_by_plan_apply_drift_and_repair() {
    let evil = yaml_escaped(EVIL);
    let text = fleet(&evil, "m1").replace(
        "metadata: {name: \"m1\"}",
        "metadata: {name: \"m1\", annotations: {flotilla.dev/context: m1}}",
    );
    let dir = FleetDir::new().fleet(text);
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: m1\n  cluster: {server: \"https://127.0.0.1:1\"}\n\
         users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: m1\n  context: {cluster: m1, user: u}\n",
    )
    .expect("write kubeconfig");
    let state = tempfile::tempdir().expect("temp dir");
    for args in [
        &["plan"][..],
        &["apply", "--yes"],
        &["drift"],
        &["repair", "--revert", "--yes"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--fleet")
            .arg(dir.path())
            .args(args)
            .env("XDG_STATE_HOME", state.path())
            .env("XDG_CONFIG_HOME", state.path())
            .env_remove("KUBECONFIG")
            .output()
            .expect("run flotilla");
        let all = [output.stdout.as_slice(), output.stderr.as_slice()].concat();
        let shown = String::from_utf8_lossy(&all);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {shown}");
        assert!(
            shown.contains("web\\u{1b}]0;pwned\\u{7}"),
            "{args:?}: {shown}"
        );
        assert!(
            !all.contains(&0x1b) && !all.contains(&0x07),
            "{args:?}: {shown}"
        );
    }
}
