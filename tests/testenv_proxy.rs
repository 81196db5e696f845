//! Kubeconfigs whose clusters are reached through a proxy, on the plain tier: a real forward
//! proxy (`cargo xtask testenv binary testproxy`: HTTP CONNECT, or SOCKS5) on a loopback port
//! in front of the members. A cluster's `proxy-url` carries `clusters`, `plan`, `apply` and
//! `status` through the proxy (its log shows the tunnels); `HTTPS_PROXY` (or `https_proxy`)
//! does the same for a cluster without one; `NO_PROXY` sends the servers it names around the
//! proxy; a proxy that is down is named in its cluster's error, quickly; and a SOCKS5
//! proxy works from `proxy-url` or the environment. Where a server's name only the proxy can
//! resolve, going through the proxy is the only way to reach it. The real kubectl, given the
//! same kubeconfig and environment, decides the same way. A proxy's password never shows.
//! Only this file's namespaces are touched, and every proxy it starts is stopped on drop.

mod harness;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use harness::{FleetDir, TestNamespace, kubectl_ok, output_text, testenv_cmd_ok};

/// Every variable a proxy decision reads: removed from each command, then set as a test says.
const PROXY_VARS: [&str; 7] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "REQUEST_METHOD",
];

/// A name only the proxy resolves (to 127.0.0.1): a client that reaches a server by it went
/// through the proxy.
const PROXIED: &str = "proxied.flotilla.test";
const BYPASSED: &str = "bypassed.flotilla.test";

/// The cached proxy binary, built by xtask when needed.
fn proxy_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let printed = testenv_cmd_ok(&["binary", "testproxy"]);
        let path = PathBuf::from(printed.lines().last().unwrap_or_default().trim());
        assert!(path.is_file(), "no test proxy at {}", path.display());
        path
    })
}

/// A running proxy; stopped on drop.
struct TestProxy {
    child: Child,
    addr: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestProxy {
    /// An HTTP CONNECT proxy (or SOCKS5), resolving each of `names` to 127.0.0.1.
    fn start(socks5: bool, names: &[String]) -> TestProxy {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("tunnels.log");
        let mut command = Command::new(proxy_binary());
        command.args(["-listen", "127.0.0.1:0", "-log"]).arg(&log);
        if socks5 {
            command.arg("-socks5");
        }
        for name in names {
            command.args(["-map", &format!("{name}=127.0.0.1")]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the test proxy");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("read the proxy's address");
        let addr = line
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("the proxy said {line:?}"))
            .trim()
            .to_string();
        TestProxy {
            child,
            addr,
            log,
            _dir: dir,
        }
    }

    /// The tunnels it opened, as `host:port` the client asked for.
    fn tunnels(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.strip_prefix("CONNECT "))
            .filter_map(|line| line.split(" -> ").next())
            .map(str::to_string)
            .collect()
    }
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port member `context`'s API server listens on.
fn member_port(config: &Value) -> u16 {
    let server = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .expect("a server");
    server
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {server}"))
}

/// One kubeconfig holding `contexts`, each changed by `change` (its one cluster, its port).
fn kubeconfig(dir: &Path, contexts: &[&str], change: impl Fn(&str, &mut Value, u16)) -> PathBuf {
    let mut merged = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [], "users": [], "contexts": [],
    });
    for context in contexts {
        let mut one = harness::faults::context_kubeconfig(context);
        let port = member_port(&one);
        let mut cluster = one["clusters"][0]["cluster"].take();
        change(context, &mut cluster, port);
        for (key, value) in [
            ("clusters", json!({"name": context, "cluster": cluster})),
            (
                "users",
                json!({"name": context, "user": one["users"][0]["user"].take()}),
            ),
            (
                "contexts",
                json!({"name": context, "context": {"cluster": context, "user": context}}),
            ),
        ] {
            merged[key].as_array_mut().expect("a list").push(value);
        }
    }
    let path = dir.join(format!("kubeconfig-{}", contexts.join("-")));
    std::fs::write(&path, serde_json::to_string_pretty(&merged).expect("JSON"))
        .expect("write the kubeconfig");
    path
}

/// Points a cluster at `name` (which only the proxy resolves), verifying the member's
/// certificate for `localhost` as kubectl's `tls-server-name` does.
fn by_name(cluster: &mut Value, name: &str, port: u16) {
    cluster["server"] = json!(format!("https://{name}:{port}"));
    cluster["tls-server-name"] = json!("localhost");
}

/// `flotilla --kubeconfig K --fleet F --context C… ARGS` with only `vars` of the proxy
/// variables set, killed after a minute (a hang is a failure, not a stuck suite).
fn flotilla(
    kubeconfig: &Path,
    fleet: &Path,
    contexts: &[&str],
    vars: &[(&str, &str)],
    args: &[&str],
) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command.arg("--kubeconfig").arg(kubeconfig);
    command.arg("--fleet").arg(fleet);
    for context in contexts {
        command.args(["--context", context]);
    }
    command
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env_remove("KUBECONFIG");
    bounded(command, vars)
}

/// The real kubectl against one context of `kubeconfig`, with `vars` as above.
fn kubectl(kubeconfig: &Path, context: &str, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--context", context, "--request-timeout=20s"])
        .args(args);
    bounded(command, vars)
}

fn bounded(mut command: Command, vars: &[(&str, &str)]) -> Output {
    for name in PROXY_VARS {
        command.env_remove(name);
    }
    for (name, value) in vars {
        command.env(name, value);
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the command");
    let id = child.id();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match wait.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.expect("wait for the command"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &id.to_string()])
                .status();
            panic!("the command did not finish within 60 s")
        }
    }
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}): {}", output_text(output)))
}

/// `clusters -o json`: each cluster's name with its health and message.
fn health(output: &Output) -> Vec<(String, String, String)> {
    json_of(output)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let text = |key: &str| item[key].as_str().unwrap_or_default().to_string();
            (text("name"), text("health"), text("message"))
        })
        .collect()
}

fn ready(output: &Output, cluster: &str) -> bool {
    health(output)
        .iter()
        .any(|(name, health, _)| name == cluster && health == "Ready")
}

/// A ConfigMap placed on every cluster.
fn fleet(ns: &str) -> FleetDir {
    FleetDir::new().fleet(format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: via-proxy, namespace: {ns}}}\n\
             data: {{route: proxy}}\n---\n\
             apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\n\
             metadata: {{name: everywhere}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: v1, kind: ConfigMap}}\n  placement: {{}}\n"
    ))
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_clusters_proxy_url_carries_every_command_through_the_proxy() {
    let proxy = TestProxy::start(false, &[]);
    let ns = TestNamespace::on("proxy-url", &["member-1".to_string()]);
    let dir = fleet(&ns.name);
    let url = format!("http://flotilla:pr0xy-s3cret@{}", proxy.addr);
    let config = kubeconfig(dir.path(), &["member-1"], |_, cluster, _| {
        cluster["proxy-url"] = json!(url);
    });
    let port = member_port(&harness::faults::context_kubeconfig("member-1"));
    let run = |args: &[&str]| {
        let output = flotilla(&config, dir.path(), &["member-1"], &[], args);
        assert!(
            !output_text(&output).contains("pr0xy-s3cret"),
            "the proxy's password shows: {}",
            output_text(&output)
        );
        output
    };

    let clusters = run(&["clusters", "-o", "json"]);
    assert_eq!(
        clusters.status.code(),
        Some(0),
        "{}",
        output_text(&clusters)
    );
    assert!(ready(&clusters, "member-1"), "{}", output_text(&clusters));
    assert!(
        proxy.tunnels().contains(&format!("127.0.0.1:{port}")),
        "the proxy saw no tunnel to the member: {:?}",
        proxy.tunnels()
    );

    let plan = run(&["plan", "-o", "json"]);
    assert_eq!(
        plan.status.code(),
        Some(1),
        "changes: {}",
        output_text(&plan)
    );
    assert!(
        json_of(&plan)["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|item| item["resource"]["kind"] == "ConfigMap"),
        "{}",
        output_text(&plan)
    );
    let tunnels_before_apply = proxy.tunnels().len();
    let apply = run(&["apply", "--yes"]);
    assert_eq!(apply.status.code(), Some(0), "{}", output_text(&apply));
    assert!(
        proxy.tunnels().len() > tunnels_before_apply,
        "apply went around the proxy"
    );
    // kubectl, straight to the member, sees what was applied through the proxy.
    let route = kubectl_ok(
        "member-1",
        &[
            "get",
            "configmap",
            "via-proxy",
            "-n",
            &ns.name,
            "-o",
            "jsonpath={.data.route}",
        ],
    );
    assert_eq!(route, "proxy");

    let status = run(&["status", "-o", "json"]);
    assert_eq!(status.status.code(), Some(0), "{}", output_text(&status));
    let cells: Vec<(Value, Value)> = json_of(&status)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| (item["cluster"].clone(), item["sync"].clone()))
        .collect();
    assert_eq!(
        cells,
        [(json!("member-1"), json!("InSync"))],
        "{}",
        output_text(&status)
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn https_proxy_in_the_environment_carries_a_cluster_without_proxy_url() {
    let name = format!("member-1.{PROXIED}");
    let proxy = TestProxy::start(false, std::slice::from_ref(&name));
    let dir = tempfile::tempdir().expect("temp dir");
    let config = kubeconfig(dir.path(), &["member-1"], |_, cluster, port| {
        by_name(cluster, &name, port);
    });
    let port = member_port(&harness::faults::context_kubeconfig("member-1"));
    let through = format!("{name}:{port}");
    let clusters = |vars: &[(&str, &str)]| {
        flotilla(
            &config,
            dir.path(),
            &["member-1"],
            vars,
            &["clusters", "-o", "json"],
        )
    };

    // Alone, the name is unknown: nothing reaches the member without the proxy.
    let direct = clusters(&[]);
    assert!(!ready(&direct, "member-1"), "{}", output_text(&direct));
    assert!(proxy.tunnels().is_empty());

    let url = format!("http://{}", proxy.addr);
    for variable in ["HTTPS_PROXY", "https_proxy"] {
        let before = proxy.tunnels().len();
        let output = clusters(&[(variable, url.as_str())]);
        assert_eq!(output.status.code(), Some(0), "{}", output_text(&output));
        assert!(
            ready(&output, "member-1"),
            "{variable}: {}",
            output_text(&output)
        );
        let tunnels = proxy.tunnels();
        assert!(
            tunnels[before..].contains(&through),
            "{variable}: no tunnel to {through}: {tunnels:?}"
        );
    }
    // HTTP_PROXY is for http:// servers only, as in kubectl.
    let http_only = clusters(&[("HTTP_PROXY", url.as_str())]);
    assert!(
        !ready(&http_only, "member-1"),
        "{}",
        output_text(&http_only)
    );

    // kubectl, with the same kubeconfig and variable, goes the same way.
    let before = proxy.tunnels().len();
    let readyz = kubectl(
        &config,
        "member-1",
        &[("HTTPS_PROXY", url.as_str())],
        &["get", "--raw", "/readyz"],
    );
    assert!(readyz.status.success(), "kubectl: {}", output_text(&readyz));
    assert!(proxy.tunnels()[before..].contains(&through));
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn no_proxy_sends_the_servers_it_names_around_the_proxy() {
    let (proxied, bypassed) = (
        format!("member-1.{PROXIED}"),
        format!("member-2.{BYPASSED}"),
    );
    let proxy = TestProxy::start(false, &[proxied.clone(), bypassed.clone()]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = kubeconfig(
        dir.path(),
        &["member-1", "member-2"],
        |context, cluster, port| {
            let name = if context == "member-1" {
                &proxied
            } else {
                &bypassed
            };
            by_name(cluster, name, port);
        },
    );
    let url = format!("http://{}", proxy.addr);
    let clusters = |vars: &[(&str, &str)]| {
        flotilla(
            &config,
            dir.path(),
            &["member-1", "member-2"],
            vars,
            &["clusters", "-o", "json"],
        )
    };

    // Both go through the proxy without NO_PROXY.
    let both = clusters(&[("HTTPS_PROXY", &url)]);
    assert!(
        ready(&both, "member-1") && ready(&both, "member-2"),
        "{}",
        output_text(&both)
    );
    let bypassed_before = proxy
        .tunnels()
        .iter()
        .filter(|t| t.starts_with(&bypassed))
        .count();
    assert!(bypassed_before > 0, "{:?}", proxy.tunnels());

    // NO_PROXY names member-2's domain (with a trailing comma, which kubectl ignores): it is
    // dialled directly, where its name means nothing, and member-1 still goes through.
    for (variable, rules) in [
        ("NO_PROXY", format!("localhost,.{BYPASSED},")),
        ("no_proxy", format!("*.{BYPASSED}")),
    ] {
        let output = clusters(&[("HTTPS_PROXY", &url), (variable, &rules)]);
        assert!(ready(&output, "member-1"), "{}", output_text(&output));
        let member2 = health(&output)
            .into_iter()
            .find(|(name, ..)| name == "member-2")
            .expect("member-2 listed");
        assert_eq!(
            member2.1,
            "Unreachable",
            "{variable}: {}",
            output_text(&output)
        );
        assert!(
            !member2.2.contains("via proxy"),
            "{variable}: went through the proxy: {}",
            member2.2
        );
        assert_eq!(
            proxy
                .tunnels()
                .iter()
                .filter(|t| t.starts_with(&bypassed))
                .count(),
            bypassed_before,
            "{variable}: the proxy tunnelled to a server NO_PROXY names"
        );
    }

    // kubectl does the same: member-2 around the proxy (and so unknown), member-1 through it.
    let rules = format!(".{BYPASSED}");
    let vars = [("HTTPS_PROXY", url.as_str()), ("NO_PROXY", rules.as_str())];
    let member2 = kubectl(&config, "member-2", &vars, &["get", "--raw", "/readyz"]);
    assert!(!member2.status.success(), "{}", output_text(&member2));
    let member1 = kubectl(&config, "member-1", &vars, &["get", "--raw", "/readyz"]);
    assert!(member1.status.success(), "{}", output_text(&member1));
    assert_eq!(
        proxy
            .tunnels()
            .iter()
            .filter(|t| t.starts_with(&bypassed))
            .count(),
        bypassed_before
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_proxy_that_is_down_is_named_in_its_clusters_error() {
    // A port that was just a proxy's and now has nothing listening.
    let addr = {
        let proxy = TestProxy::start(false, &[]);
        proxy.addr.clone()
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let name = format!("member-1.{PROXIED}");
    for (source, vars, proxy_url) in [
        (
            "the cluster's proxy-url",
            vec![],
            Some(format!("http://flotilla:pr0xy-s3cret@{addr}")),
        ),
        (
            "HTTPS_PROXY",
            vec![(
                "HTTPS_PROXY",
                format!("http://flotilla:pr0xy-s3cret@{addr}"),
            )],
            None,
        ),
    ] {
        let config = kubeconfig(dir.path(), &["member-1"], |_, cluster, port| {
            by_name(cluster, &name, port);
            if let Some(url) = &proxy_url {
                cluster["proxy-url"] = json!(url);
            }
        });
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let started = Instant::now();
        let output = flotilla(
            &config,
            dir.path(),
            &["member-1"],
            &vars,
            &["clusters", "-o", "json"],
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{source}: took {:?}",
            started.elapsed()
        );
        assert_eq!(output.status.code(), Some(3), "{}", output_text(&output));
        let (_, health, message) = health(&output).remove(0);
        assert_eq!(health, "Unreachable", "{}", output_text(&output));
        assert!(
            message.contains(&format!("via proxy http://{addr} ({source})")),
            "{source}: {message}"
        );
        assert!(message.contains("refused"), "{message}");
        assert!(
            !output_text(&output).contains("pr0xy-s3cret"),
            "{}",
            output_text(&output)
        );
    }
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_socks5_proxy_reaches_the_member_from_proxy_url_or_the_environment() {
    let name = format!("member-1.{PROXIED}");
    let proxy = TestProxy::start(true, std::slice::from_ref(&name));
    let dir = tempfile::tempdir().expect("temp dir");
    let port = member_port(&harness::faults::context_kubeconfig("member-1"));
    let through = format!("{name}:{port}");
    let url = format!("socks5://{}", proxy.addr);
    for (vars, proxy_url) in [
        (vec![], Some(url.clone())),
        (
            vec![("HTTPS_PROXY", url.replace("socks5:", "socks5h:"))],
            None,
        ),
    ] {
        let config = kubeconfig(dir.path(), &["member-1"], |_, cluster, port| {
            by_name(cluster, &name, port);
            if let Some(url) = &proxy_url {
                cluster["proxy-url"] = json!(url);
            }
        });
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let before = proxy.tunnels().len();
        let output = flotilla(
            &config,
            dir.path(),
            &["member-1"],
            &vars,
            &["clusters", "-o", "json"],
        );
        assert_eq!(output.status.code(), Some(0), "{}", output_text(&output));
        assert!(ready(&output, "member-1"), "{}", output_text(&output));
        // The proxy resolved the name: SOCKS5 hands it over rather than an address.
        assert!(
            proxy.tunnels()[before..].contains(&through),
            "{:?}",
            proxy.tunnels()
        );
    }
}
