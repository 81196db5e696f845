//! Faults on the real test environment, for `tests/testenv_faults.rs`: a second kube-apiserver
//! for a member (the member's own command line with another port and extra flags, on the same
//! etcd prefix, so it serves the same objects), a TCP proxy whose connections can be cut, etcd
//! compaction through etcd's own HTTP gateway, a ServiceAccount with bound tokens that can be
//! revoked, kubeconfigs of one context with a changed server, CA or user, and a runner that
//! kills a command that outlives its limit. It must only signal processes it started, must not
//! change the environment's kubeconfig or state file, and must leave nothing running when its
//! values are dropped.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::harness::{env, kubectl, kubectl_ok};

/// The environment's record of what it started (`target/testenv/state.json`, beside the
/// kubeconfig).
fn state() -> Value {
    let path = env()
        .kubeconfig_path
        .parent()
        .expect("the kubeconfig has a directory")
        .join("state.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// One context of the environment as a kubeconfig of its own (JSON, which every kubeconfig
/// reader takes as YAML), with the credentials inlined, ready to be changed and written.
pub fn context_kubeconfig(context: &str) -> Value {
    let text = kubectl_ok(
        context,
        &[
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ],
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("kubectl config view: {e}: {text}"))
}

/// Points the kubeconfig's one cluster at another port of 127.0.0.1.
pub fn set_port(config: &mut Value, port: u16) {
    config["clusters"][0]["cluster"]["server"] = json!(format!("https://127.0.0.1:{port}"));
}

/// Replaces the kubeconfig's one user (e.g. with `{"token": …}` or `{"tokenFile": …}`).
pub fn set_user(config: &mut Value, user: Value) {
    config["users"][0]["user"] = user;
}

/// Replaces the certificate authority the kubeconfig trusts for its one cluster.
pub fn set_ca(config: &mut Value, ca_pem: &[u8]) {
    config["clusters"][0]["cluster"]["certificate-authority-data"] =
        json!(base64::engine::general_purpose::STANDARD.encode(ca_pem));
}

pub fn write_kubeconfig(dir: &Path, config: &Value) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(&path, serde_json::to_string_pretty(config).expect("JSON"))
        .expect("write the kubeconfig");
    path
}

/// A certificate authority (PEM) that signed none of the environment's servers: a
/// self-signed one kept in `testdata/pki/` (its key was thrown away).
pub fn foreign_ca() -> Vec<u8> {
    let path = crate::harness::repo_root().join("testdata/pki/foreign-ca.crt");
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A command running in the background with its output in files, killed if it outlives the
/// limit given to [`Running::finish`], so a hang fails the test instead of stalling it.
pub struct Running {
    child: Child,
    what: String,
    out: PathBuf,
    err: PathBuf,
    _dir: tempfile::TempDir,
}

impl Running {
    /// Starts `command` with its output in files under `dir`, which lives as long as it does.
    pub fn start(dir: tempfile::TempDir, mut command: Command, what: &str) -> Running {
        let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
        let child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what}: {e}"));
        Running {
            child,
            what: what.to_string(),
            out,
            err,
            _dir: dir,
        }
    }

    /// Waits for the command to end; kills it and panics, with what it printed, after `limit`.
    pub fn finish(mut self, limit: Duration) -> Output {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the command") {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{} hung: still running after {limit:?}\nstdout:\n{}\nstderr:\n{}",
                    self.what,
                    std::fs::read_to_string(&self.out).unwrap_or_default(),
                    std::fs::read_to_string(&self.err).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output {
            status,
            stdout: std::fs::read(&self.out).unwrap_or_default(),
            stderr: std::fs::read(&self.err).unwrap_or_default(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The flotilla binary with `kubeconfig` and `fleet`, its own state and config directories,
/// started in the background.
pub fn start_flotilla(kubeconfig: &Path, fleet: &Path, args: &[&str]) -> Running {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--fleet")
        .arg(fleet)
        .args(args)
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", &state)
        .env_remove("KUBECONFIG");
    Running::start(dir, command, &format!("flotilla {}", args.join(" ")))
}

/// [`start_flotilla`], waited for (at most `limit`).
pub fn run_flotilla(kubeconfig: &Path, fleet: &Path, args: &[&str], limit: Duration) -> Output {
    start_flotilla(kubeconfig, fleet, args).finish(limit)
}

/// A second kube-apiserver for one member: the member's own flags (same etcd prefix, PKI and
/// service-account issuer, so it serves the same objects and accepts the same tokens) on
/// another port, with `extra` flags added or replacing the member's. Killed on drop.
pub struct ExtraApiserver {
    pub port: u16,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl ExtraApiserver {
    pub fn start(member: &str, extra: &[&str]) -> ExtraApiserver {
        let state = state();
        let cluster = state["clusters"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["name"] == member))
            .unwrap_or_else(|| panic!("{member} in the environment's state"));
        let exe = cluster["apiserver"]["exe"]
            .as_str()
            .unwrap_or_else(|| panic!("{member}'s kube-apiserver is not running"))
            .to_string();
        let pid = cluster["apiserver"]["pid"].as_u64().expect("a pid");
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .unwrap_or_else(|e| panic!("{member}'s kube-apiserver command line: {e}"));
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let mut flags: Vec<String> = String::from_utf8_lossy(&cmdline)
            .split('\0')
            .skip(1)
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        let mut set = |flag: String| {
            let name = flag.split('=').next().unwrap_or_default().to_string();
            flags.retain(|f| f.split('=').next() != Some(name.as_str()));
            flags.push(flag);
        };
        set(format!("--secure-port={port}"));
        set(format!("--cert-dir={}", dir.path().display()));
        for flag in extra {
            set((*flag).to_string());
        }
        let log = dir.path().join("kube-apiserver.log");
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(&exe)
            .args(&flags)
            .env("GOMEMLIMIT", "600MiB")
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {exe}: {e}"));
        let mut server = ExtraApiserver {
            port,
            child,
            log,
            _dir: dir,
        };
        server.wait_ready(member);
        server
    }

    fn wait_ready(&mut self, member: &str) {
        let server = format!("https://127.0.0.1:{}", self.port);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the extra kube-apiserver for {member} exited ({status}):\n{}",
                    self.log_tail()
                );
            }
            let out = kubectl(member, &["--server", &server, "get", "--raw", "/readyz"]);
            if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok" {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the extra kube-apiserver for {member} was not ready in 120 s:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for ExtraApiserver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP proxy on 127.0.0.1 in front of one port: [`CutProxy::sever`] drops every connection
/// and refuses new ones until [`CutProxy::restore`] — a network cut, with both ends alive.
pub struct CutProxy {
    pub port: u16,
    open: Arc<AtomicBool>,
    cuts: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl CutProxy {
    pub async fn start(upstream: u16) -> CutProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let open = Arc::new(AtomicBool::new(true));
        let (cuts, _) = tokio::sync::watch::channel(0u64);
        let (accepting, cut_signal) = (open.clone(), cuts.subscribe());
        let task = tokio::spawn(async move {
            while let Ok((mut downstream, _)) = listener.accept().await {
                if !accepting.load(Ordering::SeqCst) {
                    drop(downstream);
                    continue;
                }
                let mut cut = cut_signal.clone();
                cut.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(mut upstream) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut downstream, &mut upstream) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        CutProxy {
            port,
            open,
            cuts,
            task,
        }
    }

    pub fn sever(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }

    pub fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A POST to the environment's etcd through its HTTP gateway (`/v3/...`), parsed.
fn etcd(path: &str, body: &Value) -> Value {
    let port = state()["etcd"]["clientPort"]
        .as_u64()
        .expect("etcd's client port");
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port as u16)).expect("connect to etcd");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    // HTTP/1.0: the answer comes whole, without chunks, and the connection closes after it.
    write!(
        stream,
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write to etcd");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read from etcd");
    let (_, json) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("etcd's answer to {path}: {answer}"));
    serde_json::from_str(json).unwrap_or_else(|e| panic!("etcd's answer to {path} ({e}): {json}"))
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// etcd's current revision.
pub fn etcd_revision() -> i64 {
    let answer = etcd("/v3/kv/range", &json!({"key": b64("/"), "limit": 1}));
    answer["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no revision in {answer}"))
}

/// Compacts etcd's history up to `revision` (what the API servers' compactor does every few
/// minutes in production; the environment turns it off).
pub fn etcd_compact(revision: i64) {
    let answer = etcd(
        "/v3/kv/compaction",
        &json!({"revision": revision.to_string(), "physical": true}),
    );
    assert!(answer.get("error").is_none(), "compaction failed: {answer}");
}

/// etcd's answer when asked for `revision`: `Some(message)` when it refuses, e.g. because the
/// revision has been compacted.
pub fn etcd_refuses_revision(revision: i64) -> Option<String> {
    let answer = etcd(
        "/v3/kv/range",
        &json!({"key": b64("/"), "limit": 1, "revision": revision.to_string()}),
    );
    answer
        .get("error")
        .or_else(|| answer.get("message"))
        .map(|m| m.to_string())
}

/// A ServiceAccount in `namespace` bound to `cluster-admin` (a user outside `system:masters`,
/// so the API server's in-flight limits apply to it), whose bound tokens can be revoked by
/// deleting the Secret they are bound to. The binding is deleted on drop (the namespace takes
/// the rest).
pub struct ServiceAccount {
    context: String,
    namespace: String,
    name: String,
}

impl ServiceAccount {
    pub fn new(context: &str, namespace: &str, name: &str) -> ServiceAccount {
        kubectl_ok(
            context,
            &["create", "serviceaccount", name, "-n", namespace],
        );
        let account = ServiceAccount {
            context: context.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        };
        kubectl_ok(
            context,
            &[
                "create",
                "clusterrolebinding",
                &account.binding(),
                "--clusterrole=cluster-admin",
                &format!("--serviceaccount={namespace}:{name}"),
            ],
        );
        account
    }

    fn binding(&self) -> String {
        format!("{}-{}", self.namespace, self.name)
    }

    /// A token valid until the Secret `secret` (created here) is deleted.
    pub fn token_bound_to(&self, secret: &str) -> String {
        kubectl_ok(
            &self.context,
            &["create", "secret", "generic", secret, "-n", &self.namespace],
        );
        kubectl_ok(
            &self.context,
            &[
                "create",
                "token",
                &self.name,
                "-n",
                &self.namespace,
                "--bound-object-kind=Secret",
                &format!("--bound-object-name={secret}"),
                "--duration=1h",
            ],
        )
        .trim()
        .to_string()
    }

    /// Whether the account's cluster accepts `token` now.
    pub fn accepted(&self, token: &str) -> bool {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = context_kubeconfig(&self.context);
        set_user(&mut config, json!({ "token": token }));
        let path = write_kubeconfig(dir.path(), &config);
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&path)
            .args(["get", "--raw", "/version", "--request-timeout=10s"])
            .stdin(Stdio::null())
            .output()
            .expect("run kubectl");
        out.status.success()
    }
}

impl Drop for ServiceAccount {
    fn drop(&mut self) {
        let _ = kubectl(
            &self.context,
            &[
                "delete",
                "clusterrolebinding",
                &self.binding(),
                "--ignore-not-found",
            ],
        );
    }
}

/// A listener that accepts connections and never answers: an admission webhook pointed at it
/// holds the request that called it until the webhook's timeout.
pub struct SilentListener {
    pub port: u16,
    pub accepted: Arc<AtomicUsize>,
}

impl SilentListener {
    pub fn start() -> SilentListener {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(stream);
            }
        });
        SilentListener { port, accepted }
    }
}

/// A validating admission webhook on one cluster that calls a [`SilentListener`] for every
/// ConfigMap created or updated in `namespace` with the label `faults.flotilla.dev/hold=true`,
/// so each such write waits `timeout_seconds` (then goes through: failure policy Ignore).
/// Deleted on drop.
pub struct HoldWebhook {
    context: String,
    name: String,
    pub listener: SilentListener,
}

/// The label that makes a ConfigMap's write wait for a [`HoldWebhook`].
pub const HOLD_LABEL: &str = "faults.flotilla.dev/hold";

impl HoldWebhook {
    pub fn new(context: &str, namespace: &str, timeout_seconds: u32) -> HoldWebhook {
        let listener = SilentListener::start();
        let config = context_kubeconfig(context);
        let ca = config["clusters"][0]["cluster"]["certificate-authority-data"].clone();
        let name = format!("{namespace}-hold");
        let hook = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": "hold.faults.flotilla.dev",
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{}/", listener.port),
                    "caBundle": ca,
                },
                "rules": [{
                    "apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"],
                }],
                "objectSelector": {"matchLabels": {HOLD_LABEL: "true"}},
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": namespace},
                },
                "failurePolicy": "Ignore",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": timeout_seconds,
            }],
        });
        let created =
            crate::harness::kubectl_stdin(context, &["create", "-f", "-"], &hook.to_string());
        assert!(
            created.status.success(),
            "creating the webhook: {}",
            String::from_utf8_lossy(&created.stderr)
        );
        HoldWebhook {
            context: context.to_string(),
            name,
            listener,
        }
    }

    /// How many calls the webhook has made so far.
    pub fn calls(&self) -> usize {
        self.listener.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for HoldWebhook {
    fn drop(&mut self) {
        let _ = kubectl(
            &self.context,
            &[
                "delete",
                "validatingwebhookconfiguration",
                &self.name,
                "--ignore-not-found",
            ],
        );
    }
}
