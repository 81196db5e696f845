//! Support for integration tests that run against the real test environment
//! (`cargo xtask testenv`): finds its kubeconfig, checks once per test binary that the
//! clusters answer, builds kube-rs clients per context, gives each test a unique namespace on
//! the clusters (deleted on drop; the environment's controller-managers finish the deletion),
//! and runs the real kubectl as an independent verifier. It must never start the environment
//! itself (that is `cargo xtask test`'s job) and must only use the environment's kubeconfig.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The variable `cargo xtask test` sets to the environment's kubeconfig.
pub const KUBECONFIG_VAR: &str = "FLOTILLA_TESTENV_KUBECONFIG";

const NOT_SET: &str = "integration tests need the test environment: run `cargo xtask test`, \
or `cargo xtask testenv up` and set FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig";

/// The running test environment as the tests see it.
pub struct TestEnv {
    /// Absolute path of `target/testenv/kubeconfig`.
    pub kubeconfig_path: PathBuf,
    kubeconfig: Kubeconfig,
    /// Admin contexts: `hub`, then `member-1` … `member-N`.
    pub clusters: Vec<String>,
    /// `member-1` … `member-N`.
    pub members: Vec<String>,
}

/// The workspace root (where `target/` and `xtask/` are).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The test environment, checked once per test binary. Panics with instructions when it is
/// not configured or a cluster does not answer.
pub fn env() -> &'static TestEnv {
    static ENV: OnceLock<TestEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let raw = std::env::var_os(KUBECONFIG_VAR)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| panic!("{NOT_SET}"));
        let mut path = PathBuf::from(raw);
        if path.is_relative() {
            path = repo_root().join(path);
        }
        let kubeconfig = Kubeconfig::read_from(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {} ({e}); is the test environment up? {NOT_SET}",
                path.display()
            )
        });
        let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        let clusters: Vec<String> = contexts
            .iter()
            .filter(|c| !c.ends_with("-readonly"))
            .cloned()
            .collect();
        let members: Vec<String> = clusters
            .iter()
            .filter(|c| c.starts_with("member-"))
            .cloned()
            .collect();
        assert!(
            clusters.iter().any(|c| c == "hub") && !members.is_empty(),
            "{} has no hub/member contexts: {contexts:?}",
            path.display()
        );
        let env = TestEnv {
            kubeconfig_path: path,
            kubeconfig,
            clusters,
            members,
        };
        for cluster in &env.clusters {
            let out = env.kubectl(cluster, &["get", "--raw", "/readyz"]);
            assert!(
                out.status.success(),
                "cluster {cluster} of the test environment is not ready ({}); \
                 see `cargo xtask testenv status`",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        env
    })
}

impl TestEnv {
    /// A kube-rs client for one context of the environment's kubeconfig.
    pub async fn client(&self, context: &str) -> Client {
        let options = KubeConfigOptions {
            context: Some(context.to_string()),
            ..KubeConfigOptions::default()
        };
        let config = kube::Config::from_custom_kubeconfig(self.kubeconfig.clone(), &options)
            .await
            .unwrap_or_else(|e| panic!("kube config for context {context}: {e}"));
        Client::try_from(config).unwrap_or_else(|e| panic!("kube client for {context}: {e}"))
    }

    /// Runs the real kubectl against one context of the environment (an independent client).
    pub fn kubectl(&self, context: &str, args: &[&str]) -> Output {
        kubectl_cmd(&self.kubeconfig_path, context)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running kubectl (is it on PATH?): {e}"))
    }

    /// Like [`TestEnv::kubectl`] but panics on failure; returns stdout.
    pub fn kubectl_ok(&self, context: &str, args: &[&str]) -> String {
        let out = self.kubectl(context, args);
        assert!(
            out.status.success(),
            "kubectl --context {context} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }
}

impl TestEnv {
    /// The file every container on `member` prints, as KWOK serves it through the API
    /// server's `pods/log` (CRI format; written by testenv, see xtask/src/kwok.rs).
    pub fn kwok_logs_file(&self, member: &str) -> PathBuf {
        self.kwok_dir(member).join("current.log")
    }

    /// The previous container's log on `member` (`--previous`).
    pub fn kwok_previous_logs_file(&self, member: &str) -> PathBuf {
        self.kwok_dir(member).join("previous.log")
    }

    /// Where an exec on `member` runs.
    pub fn kwok_exec_dir(&self, member: &str) -> PathBuf {
        self.kwok_dir(member).join("exec")
    }

    fn kwok_dir(&self, member: &str) -> PathBuf {
        self.kubeconfig_path
            .parent()
            .unwrap_or(Path::new("."))
            .join("run")
            .join(member)
            .join("kwok")
    }

    /// Makes every container on `member` print `text` now (one CRI line on stdout).
    pub fn kwok_print(&self, member: &str, text: &str) {
        use std::io::Write as _;
        let path = self.kwok_logs_file(member);
        let line = format!("{} stdout F {text}\n", k8s_openapi::jiff::Timestamp::now());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("appending to {}: {e}", path.display()));
    }
}

fn kubectl_cmd(kubeconfig: &Path, context: &str) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--context")
        .arg(context)
        .arg("--request-timeout=20s");
    cmd
}

/// `kubectl --kubeconfig <testenv> --context <context> <args>`.
pub fn kubectl(context: &str, args: &[&str]) -> Output {
    env().kubectl(context, args)
}

/// Like [`kubectl`] but panics with kubectl's stderr on failure; returns stdout.
pub fn kubectl_ok(context: &str, args: &[&str]) -> String {
    env().kubectl_ok(context, args)
}

/// The names of `member`'s Running pods labelled `app=web` in `ns`, sorted, as kubectl lists
/// them: what the fleets of the pods, logs and exec tests run.
pub fn running_web_pods(member: &str, ns: &str) -> Vec<String> {
    let mut pods: Vec<String> = kubectl_ok(
        member,
        &[
            "get",
            "pods",
            "-n",
            ns,
            "-l",
            "app=web",
            "--field-selector=status.phase=Running",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
    )
    .split_whitespace()
    .map(str::to_string)
    .collect();
    pods.sort();
    pods
}

/// Runs `cargo xtask testenv <args>` (e.g. `["stop", "member-2"]`). `cargo xtask test`
/// passes its own binary in `FLOTILLA_XTASK_BIN`, which avoids a nested cargo.
pub fn testenv_cmd(args: &[&str]) -> Output {
    let mut cmd = match std::env::var_os("FLOTILLA_XTASK_BIN").filter(|v| !v.is_empty()) {
        Some(bin) => Command::new(bin),
        None => {
            let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
            c.arg("xtask");
            c
        }
    };
    cmd.arg("testenv")
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running cargo xtask testenv {}: {e}", args.join(" ")))
}

/// Like [`testenv_cmd`] but panics with its output on failure.
pub fn testenv_cmd_ok(args: &[&str]) -> String {
    let out = testenv_cmd(args);
    assert!(
        out.status.success(),
        "cargo xtask testenv {} failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// A namespace unique to one test, created on some clusters and deleted from them on drop.
pub struct TestNamespace {
    pub name: String,
    clusters: Vec<String>,
}

impl TestNamespace {
    /// Creates the namespace on every cluster (hub and members).
    pub fn new(test: &str) -> Self {
        Self::on(test, &env().clusters)
    }

    /// Creates the namespace on the given clusters only.
    pub fn on(test: &str, clusters: &[String]) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut slug: String = test
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        slug.truncate(40);
        let name = format!("t-{}-{:x}-{n}", slug.trim_matches('-'), std::process::id());
        let env = env();
        let children: Vec<(String, std::process::Child)> = clusters
            .iter()
            .map(|cluster| {
                let child = kubectl_cmd(&env.kubeconfig_path, cluster)
                    .args(["create", "namespace", &name])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap_or_else(|e| panic!("running kubectl: {e}"));
                (cluster.clone(), child)
            })
            .collect();
        let ns = Self {
            name,
            clusters: clusters.to_vec(),
        };
        for (cluster, child) in children {
            let out = child
                .wait_with_output()
                .unwrap_or_else(|e| panic!("waiting for kubectl: {e}"));
            // A hub may already have copied its namespace of this (unique) name onto a member,
            // as Karmada's namespace sync does: it is the same namespace.
            let copied_by_the_hub = String::from_utf8_lossy(&out.stderr).contains("AlreadyExists")
                || String::from_utf8_lossy(&out.stderr).contains("already exists");
            assert!(
                out.status.success() || copied_by_the_hub,
                "creating namespace {} on {cluster}: {}",
                ns.name,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        ns
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        // A TestNamespace only exists once env() succeeded, so this does not panic.
        let env = env();
        let children: Vec<_> = self
            .clusters
            .iter()
            .filter_map(|cluster| {
                kubectl_cmd(&env.kubeconfig_path, cluster)
                    .args([
                        "delete",
                        "namespace",
                        &self.name,
                        "--wait=false",
                        "--ignore-not-found",
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .ok()
                    .map(|c| (cluster, c))
            })
            .collect();
        for (cluster, child) in children {
            if let Ok(out) = child.wait_with_output()
                && !out.status.success()
            {
                eprintln!(
                    "warning: deleting test namespace {} on {cluster}: {}",
                    self.name,
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
    }
}

/// Waits until no other test of this binary holds the members (the hub tests share them, and
/// some stop one): the guard lets the next one run.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A hub test's footing: run alone among its binary's tests ([`serial`]), on a hub its file's
/// check found ready, with a namespace of its own, deleted before the next test runs.
pub struct HubTest {
    pub ns: TestNamespace,
    _serial: MutexGuard<'static, ()>,
}

impl HubTest {
    /// Waits for its turn, runs `check` (which panics with instructions unless the hub is of
    /// the file's kind), then creates namespace `test` on the hub only.
    pub fn on_hub(test: &str, check: fn()) -> HubTest {
        HubTest::on(test, &["hub".to_string()], check)
    }

    /// [`on_hub`](Self::on_hub), with the namespace created on `clusters`.
    pub fn on(test: &str, clusters: &[String], check: fn()) -> HubTest {
        let serial = serial();
        check();
        HubTest {
            ns: TestNamespace::on(test, clusters),
            _serial: serial,
        }
    }

    /// The namespace's name.
    pub fn ns(&self) -> &str {
        &self.ns.name
    }
}

/// Runs the flotilla binary with the environment's kubeconfig and the given fleet directory,
/// with its own state and config directories so nothing of the user's leaks in.
pub fn flotilla(fleet: &Path, args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .arg("--fleet")
        .arg(fleet)
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla")
}

/// Applies fleet directory `fleet` to the environment: `flotilla apply --yes` must exit 0.
pub fn apply_fleet(fleet: &Path) {
    let applied = flotilla(fleet, &["apply", "--yes"]);
    assert_eq!(applied.status.code(), Some(0), "{}", output_text(&applied));
}

/// The real console on `fleet` and the environment in a pseudo-terminal (200×50), keeping its
/// state (the audit log, the edit journal) in `fleet.state()`.
pub fn pty_console(fleet: &crate::harness::FleetDir) -> crate::harness::PtyApp {
    let kubeconfig = env().kubeconfig_path.to_string_lossy().to_string();
    let state = fleet.state().to_string_lossy().to_string();
    let dir = fleet.path().to_string_lossy().to_string();
    crate::harness::PtyApp::spawn(
        &["--kubeconfig", &kubeconfig, "--fleet", &dir, "console"],
        200,
        50,
        &[("XDG_STATE_HOME", &state)],
    )
}

/// The console's live backend (not started) as `flotilla --kubeconfig KUBECONFIG --fleet
/// FLEET FLAGS… console` builds it.
pub fn live_fleet_with(
    kubeconfig: &Path,
    fleet: &Path,
    flags: &[&str],
) -> flotilla::backend::kube::live::LiveFleet {
    use clap::Parser as _;

    let kubeconfig = kubeconfig.to_string_lossy().to_string();
    let fleet = fleet.to_string_lossy().to_string();
    let mut args = vec!["flotilla", "--kubeconfig", &kubeconfig, "--fleet", &fleet];
    args.extend(flags);
    let cli = flotilla::cli::Cli::try_parse_from(args).expect("flags");
    let (live_fleet, _) = flotilla::launch::live_fleet(&cli.global).expect("live fleet");
    live_fleet
}

/// [`live_fleet_with`] the environment's kubeconfig.
pub fn live_fleet(fleet: &Path, flags: &[&str]) -> flotilla::backend::kube::live::LiveFleet {
    live_fleet_with(&env().kubeconfig_path, fleet, flags)
}

/// Both streams of a finished command, for assertion messages.
pub fn output_text(output: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A fleet of the clusters in `inventory` (text from [`inventory`] or [`prod_inventory`]) and
/// one Deployment `web` in `ns` (`replicas` pods labelled `app=web`, nginx), which one
/// PropagationPolicy places on every `env: prod` cluster: the workload the pods, logs and exec
/// tests read.
pub fn web_fleet(ns: &str, replicas: usize, mut inventory: String) -> crate::harness::FleetDir {
    inventory.push_str(&format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {{requests: {{cpu: 100m}}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"#
    ));
    crate::harness::FleetDir::new().fleet(inventory)
}

/// Karmada Cluster inventory documents of `members`, each reached through its own context and
/// labelled `env: prod`.
pub fn prod_inventory(members: &[String]) -> String {
    let clusters: Vec<(&str, &str, &str)> = members
        .iter()
        .map(|m| (m.as_str(), m.as_str(), "prod"))
        .collect();
    inventory(&clusters)
}

/// Karmada Cluster inventory documents: (cluster name, context, env label).
pub fn inventory(clusters: &[(&str, &str, &str)]) -> String {
    clusters
        .iter()
        .map(|(name, context, env)| {
            format!(
                "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: {name}\n  \
                 labels: {{env: {env}}}\n  annotations: {{flotilla.dev/context: {context}}}\n---\n"
            )
        })
        .collect()
}

/// Starts a stopped member again when dropped, even when an assertion fails half-way.
pub struct Restart<'a>(pub &'a str);

impl Drop for Restart<'_> {
    fn drop(&mut self) {
        let _ = testenv_cmd(&["start", self.0]);
    }
}

/// `kubectl get … -o json` on `context`, parsed (panics with kubectl's output otherwise).
pub fn json(context: &str, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let text = kubectl_ok(context, &all);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("kubectl printed no JSON ({e}): {text}"))
}

/// The status of condition `kind` in `obj.status.conditions`.
pub fn condition<'a>(obj: &'a serde_json::Value, kind: &str) -> Option<&'a str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(serde_json::Value::as_str) == Some(kind))?
        .get("status")?
        .as_str()
}

/// Polls `check` every 500 ms until it returns `Some`, or panics after `limit`.
pub fn eventually<T>(
    what: &str,
    limit: std::time::Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let t = std::time::Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            t.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Runs kubectl on `context` with `input` on its standard input.
pub fn kubectl_stdin(context: &str, args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = kubectl_cmd(&env().kubeconfig_path, context)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kubectl");
    child
        .stdin
        .take()
        .expect("kubectl stdin")
        .write_all(input.as_bytes())
        .expect("writing to kubectl");
    child.wait_with_output().expect("waiting for kubectl")
}

/// (reason, message) of the Events kubectl lists on `member` about Deployment `ns/web`.
pub fn deployment_events(member: &str, ns: &str) -> Vec<(String, String)> {
    let listed = json(
        member,
        &[
            "get",
            "events",
            "-n",
            ns,
            "--field-selector",
            "involvedObject.kind=Deployment,involvedObject.name=web",
        ],
    );
    listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["reason"].as_str().unwrap_or_default().to_string(),
                e["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// `kubectl get OBJECT -n NS -o jsonpath=PATH` on `context`, e.g. `deployment/web` and
/// `{.spec.replicas}`.
pub fn jsonpath(context: &str, object: &str, ns: &str, path: &str) -> String {
    kubectl_ok(
        context,
        &["get", object, "-n", ns, "-o", &format!("jsonpath={path}")],
    )
}

/// `kubectl apply -f -` of `yaml` on `context`.
pub fn apply(context: &str, yaml: &str) {
    let out = kubectl_stdin(context, &["apply", "-f", "-"], yaml);
    assert!(
        out.status.success(),
        "kubectl apply on {context} failed: {}\n{yaml}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// `flotilla --hub hub clusters -o json` (the hub's members as the hub reports them), as items;
/// its exit code is 3 exactly when a member is Unreachable or Unauthorized, else 0.
pub fn hub_clusters() -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub", "clusters", "-o", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("JSON: {}", output_text(&out)));
    let items = value["items"].as_array().cloned().unwrap_or_default();
    let failed = items
        .iter()
        .any(|item| item["health"] == "Unreachable" || item["health"] == "Unauthorized");
    assert_eq!(
        out.status.code(),
        Some(if failed { 3 } else { 0 }),
        "{}",
        output_text(&out)
    );
    items
}

/// `flotilla --hub hub render -o json` (the per-cluster objects the hub itself rendered),
/// parsed: `{"items":[{"cluster","object"}],"unplaced":[{"cluster","resource","reason"}]}`.
pub fn hub_render() -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub", "render", "-o", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The console's backend events on the test environment's hub, for a session driven without a
/// terminal ([`hub_console`]).
pub struct HubEvents {
    runtime: tokio::runtime::Runtime,
    events: tokio::sync::mpsc::UnboundedReceiver<flotilla::messages::BackendEvent>,
}

impl HubEvents {
    /// Dispatches backend events into `session` until `done` holds; panics after `limit`,
    /// naming the last notice.
    pub fn pump(
        &mut self,
        session: &mut flotilla::app::Session,
        limit: std::time::Duration,
        done: &dyn Fn(&flotilla::app::Session) -> bool,
    ) {
        self.pump_seeing(session, limit, done);
    }

    /// [`pump`](Self::pump), returning the events it dispatched.
    pub fn pump_seeing(
        &mut self,
        session: &mut flotilla::app::Session,
        limit: std::time::Duration,
        done: &dyn Fn(&flotilla::app::Session) -> bool,
    ) -> Vec<flotilla::messages::BackendEvent> {
        self.pump_explained(session, limit, done, &|_| String::new())
    }

    /// [`pump_seeing`](Self::pump_seeing), whose timeout also says what `explain` finds.
    pub fn pump_explained(
        &mut self,
        session: &mut flotilla::app::Session,
        limit: std::time::Duration,
        done: &dyn Fn(&flotilla::app::Session) -> bool,
        explain: &dyn Fn(&flotilla::app::Session) -> String,
    ) -> Vec<flotilla::messages::BackendEvent> {
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + limit;
        while !done(session) {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out; notice: {:?}{}",
                session.state.notice,
                explain(session)
            );
            let next = self.runtime.block_on(async {
                tokio::time::timeout(std::time::Duration::from_millis(500), self.events.recv())
                    .await
            });
            match next {
                Ok(Some(event)) => {
                    seen.push(event.clone());
                    session.dispatch(flotilla::app::Action::Backend(event));
                }
                Ok(None) => panic!("the hub backend stopped"),
                Err(_) => {}
            }
        }
        seen
    }
}

/// A runtime and flotilla's reader of the test environment's hub, connected as `--hub hub`
/// connects.
pub fn hub_reader() -> (tokio::runtime::Runtime, flotilla::backend::hub::Hub) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let hub = runtime
        .block_on(flotilla::backend::hub::connect(
            Some(&env().kubeconfig_path),
            "hub",
            Default::default(),
        ))
        .expect("connect to the hub");
    (runtime, hub)
}

/// The console's session on the hub `hub` (editable, as `flotilla --hub hub console` starts
/// it), and its backend's events.
pub fn hub_console() -> (flotilla::app::Session, HubEvents) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (events_tx, events) = tokio::sync::mpsc::unbounded_channel();
    let started = runtime
        .block_on(flotilla::launch::start_hub(
            Some(&env().kubeconfig_path),
            "hub",
            false,
            events_tx,
        ))
        .expect("start the hub session");
    let state = flotilla::app::state_for_fleet(&started.fleet, started.traits.label.clone());
    (started.session(state), HubEvents { runtime, events })
}

/// The index of the row showing `key` (`Kind/ns/name`).
pub fn row_of(session: &flotilla::app::Session, key: &str) -> usize {
    session
        .state
        .resources
        .iter()
        .position(|r| r.target.display_key() == key)
        .unwrap_or_else(|| panic!("{key} is a row of the console"))
}

/// Puts the resource cursor on the row showing `key` (`Kind/ns/name`); its index.
pub fn select_row(session: &mut flotilla::app::Session, key: &str) -> usize {
    let row = row_of(session, key);
    crate::harness::console::put_cursor_on(&mut session.state, row);
    row
}

/// The matrix column of cluster `member` in the session's fleet.
pub fn column_of(session: &flotilla::app::Session, member: &str) -> usize {
    session
        .state
        .fleet
        .cluster_index(member)
        .unwrap_or_else(|| panic!("{member} is a column"))
}

/// Opens the object view of row `key` on `member` through the key path (tab to the matrix, then
/// enter) and waits until the backend's read of that cell passes `done`.
pub fn live_view_of(
    session: &mut flotilla::app::Session,
    events: &mut HubEvents,
    key: &str,
    member: &str,
    done: &dyn Fn(&flotilla::app::state::object_view::LiveRead) -> bool,
) -> flotilla::app::state::object_view::LiveRead {
    let row = select_row(session, key);
    let column = column_of(session, member);
    crate::harness::console::press_in(session, "<tab>");
    crate::harness::console::put_cluster_cursor_on(&mut session.state, column);
    crate::harness::console::press_in(session, "<enter>");
    assert!(
        matches!(
            session.state.mode,
            flotilla::app::state::Mode::Object { .. }
        ),
        "enter opens the cell: {:?}",
        session.state.notice
    );
    let cell = flotilla::messages::CellRef {
        resource: row as u32,
        cluster: column as u32,
    };
    events.pump(session, std::time::Duration::from_secs(120), &|s| {
        s.state.live.reads.get(&cell).is_some_and(done)
    });
    session.state.live.reads[&cell].clone()
}

/// Pumps the hub console until row `key` is Healthy on every testenv member; whether a cell
/// was seen Progressing on the way.
pub fn pump_until_healthy(
    session: &mut flotilla::app::Session,
    events: &mut HubEvents,
    key: &str,
    limit: std::time::Duration,
) -> bool {
    use flotilla::model::HealthKind;

    let members = &env().members;
    let progressing_already = console_health(session, key)
        .values()
        .any(|(kind, _)| *kind == HealthKind::Progressing);
    let done = |s: &flotilla::app::Session| {
        let health = console_health(s, key);
        members.iter().all(|m| {
            health
                .get(m)
                .is_some_and(|(kind, _)| *kind == HealthKind::Healthy)
        })
    };
    // A timeout says what the console showed and what each member holds.
    let explain = |s: &flotilla::app::Session| {
        let namespace = key.split('/').nth(1).unwrap_or_default();
        let mut text = format!("\nthe console's health: {:?}", console_health(s, key));
        // What the hub itself recorded (Karmada's bindings and Works, OCM's ManifestWorks,
        // KubeFed's Federated objects), so a timeout tells a silent hub from a lost update.
        for kind in [
            "resourcebindings",
            "works",
            "manifestworks",
            "federateddeployments",
        ] {
            let out = env().kubectl("hub", &["get", kind, "-A", "-o", "yaml"]);
            let listed = String::from_utf8_lossy(&out.stdout);
            for object in listed
                .split("\n- apiVersion")
                .filter(|o| o.contains(namespace))
            {
                text.push_str(&format!("\non the hub, {kind}:\n- apiVersion{object}"));
            }
        }
        for member in members {
            let out = env().kubectl(
                member,
                &["get", "deploy,pods", "-n", namespace, "-o", "wide"],
            );
            text.push_str(&format!(
                "\non {member}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        text
    };
    let seen = events.pump_explained(session, limit, &done, &explain);
    progressing_already
        || seen.iter().any(|event| {
            matches!(event, flotilla::messages::BackendEvent::Health(updates)
            if updates.iter().any(|u| u.health.as_ref()
                .is_some_and(|h| h.kind == HealthKind::Progressing)))
        })
}

/// Pumps the hub console until the open override editor has its preview (the dry run of the
/// edit, per cell); the preview.
pub fn pump_until_previewed(
    session: &mut flotilla::app::Session,
    events: &mut HubEvents,
) -> Vec<flotilla::messages::PlanItem> {
    use flotilla::app::state::Mode;

    events.pump(
        session,
        std::time::Duration::from_secs(30),
        &|s| match &s.state.mode {
            Mode::Overrides(editor) => !editor.dry_run.is_empty(),
            _ => false,
        },
    );
    let Mode::Overrides(editor) = &session.state.mode else {
        unreachable!("the pump waited for the override editor")
    };
    editor.dry_run.clone()
}

/// The lines a unified diff removes or adds (its `---`/`+++` headers aside).
pub fn changed_lines(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("---")
                && !l.starts_with("+++")
        })
        .collect()
}

/// Pumps the hub console until row `key` is Degraded on `member`; the row's health per member
/// then.
pub fn pump_until_degraded(
    session: &mut flotilla::app::Session,
    events: &mut HubEvents,
    key: &str,
    member: &str,
    limit: std::time::Duration,
) -> std::collections::BTreeMap<String, (flotilla::model::HealthKind, String)> {
    events.pump(session, limit, &|s| {
        console_health(s, key)
            .get(member)
            .is_some_and(|(kind, _)| *kind == flotilla::model::HealthKind::Degraded)
    });
    console_health(session, key)
}

/// `status --hub` for `key` ([`hub_status_health`]) once it says Healthy on every member;
/// panics after `limit`.
pub fn hub_status_until_healthy(
    key: &str,
    limit: std::time::Duration,
) -> std::collections::BTreeMap<String, (String, String)> {
    eventually("status --hub to say Healthy", limit, || {
        let status = hub_status_health(key);
        env()
            .members
            .iter()
            .all(|m| status.get(m).is_some_and(|(h, _)| h == "Healthy"))
            .then_some(status)
    })
}

/// The available replicas kubectl reads of Deployment `ns/web` on `member`.
pub fn available_replicas(member: &str, ns: &str) -> String {
    jsonpath(member, "deploy/web", ns, "{.status.availableReplicas}")
        .trim()
        .to_string()
}

/// The console model's health of row `key` on each member: (kind, reason).
pub fn console_health(
    session: &flotilla::app::Session,
    key: &str,
) -> std::collections::BTreeMap<String, (flotilla::model::HealthKind, String)> {
    let Some(row) = session
        .state
        .resources
        .iter()
        .position(|r| r.target.display_key() == key)
    else {
        return Default::default();
    };
    session
        .state
        .clusters
        .iter()
        .enumerate()
        .filter_map(|(column, cluster)| {
            let health = session.state.cells.health(row, column)?;
            Some((
                cluster.spec.name.clone(),
                (health.kind, health.reason.clone()),
            ))
        })
        .collect()
}

/// `flotilla --hub hub status -o json` for one resource: (health, reason) per placed member.
pub fn hub_status_health(key: &str) -> std::collections::BTreeMap<String, (String, String)> {
    let fleet = tempfile::tempdir().expect("a fleet dir");
    let out = flotilla(
        fleet.path(),
        &["--hub", "hub", "status", "--resource", key, "-o", "json"],
    );
    let value: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("status -o json: {}", output_text(&out)));
    value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["sync"] != "NotPlaced")
        .map(|item| {
            (
                item["cluster"].as_str().unwrap_or_default().to_string(),
                (
                    item["health"].as_str().unwrap_or_default().to_string(),
                    item["reason"].as_str().unwrap_or_default().to_string(),
                ),
            )
        })
        .collect()
}

/// Feeds the console backend's events into `state` until `done` holds; panics naming `what`
/// (and every cluster's health) when the backend stops or [`wait_limit`] passes first.
pub async fn run_until(
    state: &mut flotilla::app::State,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<flotilla::messages::BackendEvent>,
    what: &str,
    done: impl FnMut(&flotilla::app::State) -> bool,
) {
    let held = run_within(state, events, crate::harness::wait_limit(), what, done).await;
    assert!(
        held,
        "timed out waiting for {what}; clusters: {:?}",
        state
            .clusters
            .iter()
            .map(|c| (&c.status.health, &c.status.message))
            .collect::<Vec<_>>()
    );
}

/// Feeds the console backend's events into `state` through the real `update` until `done`
/// holds (true) or `limit` passes (false); panics naming `what` when the backend stops.
pub async fn run_within(
    state: &mut flotilla::app::State,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<flotilla::messages::BackendEvent>,
    limit: std::time::Duration,
    what: &str,
    mut done: impl FnMut(&flotilla::app::State) -> bool,
) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while !done(state) {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(event)) => {
                flotilla::app::update(state, flotilla::app::Action::Backend(event));
            }
            Ok(None) => panic!("the backend stopped before {what}"),
            Err(_) => return false,
        }
    }
    true
}
