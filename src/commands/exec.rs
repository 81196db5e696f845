//! `flotilla exec`: a command run in a pod of a workload on one cluster, as `kubectl exec`
//! runs it — the pod (a Running, ready one of the workload's, or `--pod`) and container (`-c`,
//! else the default-container annotation, else the first) chosen by the backend's rules and
//! said on stderr; stdin, stdout and stderr wired to the command's; with `-t` the local
//! terminal in raw mode for it, resized with the window and restored on every way out (end,
//! error, panic, signal); the command's exit code returned as kubectl returns it. A
//! danger-class cluster asks for its name unless `--yes`; every command run is written to the
//! audit log (who, cluster, pod, container, the command — never its output). On a hub, a
//! member is reached through its own kubeconfig context or not at all. The console's `x`
//! runs the same path ([`run`]) once it has the terminal handed over. It must not print a
//! credential or keep what the command printed.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::pods::{hub_of, scope_of};
use super::scope::{Clusters, InputError, input_error, prepare_clusters, resource_filter};
use crate::app::state::exec::ExecHandoff;
use crate::backend::audit;
use crate::backend::fanout::cluster_api::{ApiError, ClusterApi, Guard, Limits};
use crate::backend::fanout::exec::{
    ContainerChoice, ExecExit, ExecRequest, ExecSession, PodExec, TermSize, choose_container,
    choose_pod, container_names, pod_name,
};
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::pods::workload_pods;
use crate::backend::hub;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::cli::{ExecArgs, GlobalArgs, exit};
use crate::config::{self, Settings};
use crate::model::{ClusterSpec, ResourceRef};
use crate::safe_text::{printable, redact};

/// `flotilla exec`.
pub async fn run(global: &GlobalArgs, args: &ExecArgs) -> anyhow::Result<u8> {
    let scope = match scope_of(
        Some(&args.resource),
        std::slice::from_ref(&args.cluster),
        None,
    ) {
        Ok(scope) => scope,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    if let Some(context) = hub_of(global) {
        return Ok(on_hub(global, args, context).await);
    }
    let code = match prepare_clusters(global, &scope, false).await {
        Err(InputError(message)) => input_error(&message),
        Ok(Clusters::Live(prepared)) => match prepared.targets.into_iter().next() {
            Some(target) => in_fleet(target.api, &target.objects, args).await,
            None => input_error(&format!("--cluster {}: not in the fleet", args.cluster)),
        },
        Ok(Clusters::Simulated(prepared)) => match prepared.targets.into_iter().next() {
            Some(target) => in_fleet(target.api, &target.objects, args).await,
            None => input_error(&format!("--cluster {}: not in the fleet", args.cluster)),
        },
    };
    Ok(code)
}

/// The console's `x`, once it has handed the terminal over: the same path as the command
/// (its cluster's name already typed in the console where it is a danger-class one), with
/// stdin and, on a terminal, a terminal of its own; then the exit code, and enter to take the
/// console back, so what the command printed last can be read. Says how it ended.
pub async fn in_console(global: &GlobalArgs, handoff: ExecHandoff) -> String {
    let command = handoff.command.join(" ");
    if global.readonly {
        return "read-only: exec runs a command inside a pod, which --readonly forbids".into();
    }
    let args = ExecArgs {
        resource: handoff.workload,
        cluster: handoff.cluster,
        pod: handoff.pod,
        container: None,
        stdin: true,
        tty: std::io::stdin().is_terminal(),
        yes: true,
        command: handoff.command,
    };
    println!(
        "flotilla: exec {} in {} on {}; the console comes back when it ends",
        printable(&command, true),
        args.resource,
        args.cluster
    );
    let code = match run(global, &args).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            exit::INPUT
        }
    };
    print!("\r\n[exit code {code}] press enter to return to flotilla ");
    let _ = std::io::stdout().flush();
    let _ = read_line_unbuffered();
    format!(
        "exec {} on {}: exit code {code}",
        printable(&command, true),
        args.cluster
    )
}

/// The named workload among what the fleet places on the cluster, then the exec.
async fn in_fleet<A: ClusterApi + PodExec>(
    api: Result<A, ApiError>,
    placed: &[serde_json::Value],
    args: &ExecArgs,
) -> u8 {
    let api = match api {
        Ok(api) => api,
        Err(err) => return cluster_error(&args.cluster, &err),
    };
    let Ok((kind, namespace, name)) = resource_filter(&args.resource) else {
        return input_error(&format!("{}: expected KIND/NAMESPACE/NAME", args.resource));
    };
    let found = placed.iter().map(resource_of).find(|resource| {
        crate::model::names_kind(&resource.kind, &kind)
            && resource.name == name
            && namespace
                .as_ref()
                .is_none_or(|ns| resource.namespace.as_ref() == Some(ns))
    });
    match found {
        Some(resource) => exec_in(&api, &resource, args).await,
        None => input_error(&format!(
            "{}: the fleet does not place it on {}\n  hint: `flotilla pods {}` lists the clusters it runs on",
            args.resource, args.cluster, args.resource
        )),
    }
}

/// On a hub: the member through its kubeconfig context (a context of its name), else the
/// hub's proxy to it (Karmada's cluster proxy); a hub with neither says so.
async fn on_hub(global: &GlobalArgs, args: &ExecArgs, context: &str) -> u8 {
    let hub = match hub::connect(global.kubeconfig.as_deref(), context, Timeouts::default()).await {
        Ok(hub) => hub,
        Err(err) => return super::hub::failed(err),
    };
    let member = ClusterSpec {
        name: args.cluster.clone(),
        ..ClusterSpec::default()
    };
    let client = match hub.member_client(&member, Timeouts::default()).await {
        Ok(client) => client,
        Err(err) => {
            eprintln!("error: {}: {}", args.cluster, redact(&err.to_string()));
            return exit::of_hub(&err);
        }
    };
    let Ok((kind, namespace, name)) = resource_filter(&args.resource) else {
        return input_error(&format!("{}: expected KIND/NAMESPACE/NAME", args.resource));
    };
    let api_version = if kind.eq_ignore_ascii_case("Job") {
        "batch/v1"
    } else {
        "apps/v1"
    };
    let resource = ResourceRef {
        api_version: api_version.into(),
        kind,
        namespace: Some(namespace.unwrap_or_else(|| "default".into())),
        name,
    };
    exec_in(&KubeCluster::new(client, global.readonly), &resource, args).await
}

fn cluster_error(cluster: &str, err: &ApiError) -> u8 {
    eprintln!(
        "error: {cluster}: {}",
        printable(&redact(&err.to_string()), true)
    );
    match err {
        ApiError::Readonly => exit::INPUT,
        _ => exit::PARTIAL,
    }
}

/// The workload read live, its pod and container chosen, the operator asked on a danger-class
/// cluster, and the command run, audited.
async fn exec_in<A: ClusterApi + PodExec>(api: &A, resource: &ResourceRef, args: &ExecArgs) -> u8 {
    let guard = Guard::new(Limits::default());
    let key = resource.display_key();
    let live = match guard.call(|| api.get(resource)).await {
        Ok(Some(live)) => live,
        Ok(None) => {
            return input_error(&format!(
                "{key} is not on {} (the fleet places it there; has it been applied?)",
                args.cluster
            ));
        }
        Err(err) => return cluster_error(&args.cluster, &err),
    };
    let pods = match workload_pods(api, &guard, &live, "").await {
        Ok(pods) => pods,
        Err(err) => return cluster_error(&args.cluster, &err),
    };
    let pod = match choose_pod(&pods, args.pod.as_deref(), &key, &args.cluster) {
        Ok(pod) => pod,
        Err(err) => return input_error(&err.to_string()),
    };
    let (container, choice) = match choose_container(pod, args.container.as_deref()) {
        Ok(chosen) => chosen,
        Err(err) => return input_error(&err.to_string()),
    };
    let namespace = resource
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let pod = pod_name(pod).to_string();
    let containers = container_names_of(&pods, &pod);
    eprintln!(
        "{}",
        printable(
            &format!(
                "exec: {} pod {namespace}/{pod}, container {container}{}",
                args.cluster,
                match choice {
                    ContainerChoice::Named => String::new(),
                    ContainerChoice::Annotation =>
                        " (its kubectl.kubernetes.io/default-container)".into(),
                    ContainerChoice::First if containers.len() > 1 =>
                        format!(" (the first of {})", containers.join(", ")),
                    ContainerChoice::First => String::new(),
                }
            ),
            true
        )
    );
    if !args.yes && !confirm_danger(&args.cluster, &args.command) {
        eprintln!("nothing run");
        return exit::INPUT;
    }
    let tty = args.stdin && args.tty && {
        let terminal = std::io::stdin().is_terminal();
        if !terminal {
            eprintln!("Unable to use a TTY - input is not a terminal or the right kind of file");
        }
        terminal
    };
    let request = ExecRequest {
        namespace: namespace.clone(),
        pod: pod.clone(),
        container: container.clone(),
        command: args.command.clone(),
        stdin: args.stdin,
        tty,
    };
    let mut entry = audit::Entry::new("exec");
    entry.clusters = vec![args.cluster.clone()];
    entry.objects = vec![key, format!("Pod/{namespace}/{pod}")];
    entry.exec = Some(audit::ExecRun {
        pod: format!("{namespace}/{pod}"),
        container,
        command: args.command.iter().map(|word| redact(word)).collect(),
    });
    let running = audit::in_flight(entry.clone());
    let (code, result, message) = match api.exec(&request).await {
        Err(err) => {
            let code = cluster_error(&args.cluster, &err);
            (code, "failed", redact(&err.to_string()))
        }
        Ok(session) => match attach(session, tty).await {
            Attached::Ended(ExecExit::Code(code)) => {
                if code != 0 {
                    eprintln!("command terminated with exit code {code}");
                }
                (
                    u8::try_from(code & 0xff).unwrap_or(1),
                    "ok",
                    format!("exit code {code}"),
                )
            }
            Attached::Ended(ExecExit::Failed(message)) => {
                eprintln!(
                    "error: {}: {}",
                    args.cluster,
                    printable(&redact(&message), true)
                );
                (exit::PARTIAL, "failed", redact(&message))
            }
            Attached::Signal(signal) => {
                eprintln!("\ninterrupted ({signal})");
                (exit::of_signal(signal), "interrupted", signal.to_string())
            }
        },
    };
    entry.results = vec![audit::ClusterResult {
        cluster: args.cluster.clone(),
        result: result.into(),
        done: usize::from(result == "ok"),
        failed: usize::from(result != "ok"),
        message,
    }];
    drop(running);
    audit::record_or_warn(&entry);
    code
}

fn container_names_of(pods: &[serde_json::Value], pod: &str) -> Vec<String> {
    pods.iter()
        .find(|p| pod_name(p) == pod)
        .map(|p| container_names(p).into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether the cluster is in the danger class (`dangerClusters` in the settings).
pub fn is_dangerous(cluster: &str) -> bool {
    let (settings, _) = Settings::load(config::user_dir().as_deref());
    settings
        .danger_patterns()
        .iter()
        .any(|pattern| crate::glob::glob_match(pattern, cluster))
}

/// On a danger-class cluster, asks for its name on stderr and reads it from stdin one byte at
/// a time (what follows the line stays for the command). Any other cluster: yes.
fn confirm_danger(cluster: &str, command: &[String]) -> bool {
    if !is_dangerous(cluster) {
        return true;
    }
    eprint!(
        "{} is a danger-class cluster: type its name to run `{}` there: ",
        cluster,
        printable(&redact(&command.join(" ")), true)
    );
    let _ = std::io::stderr().flush();
    read_line_unbuffered().is_some_and(|answer| answer.trim() == cluster)
}

/// A line of stdin read without a buffer that would keep what follows it.
pub fn read_line_unbuffered() -> Option<String> {
    let mut file = stdin_file()?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match file.read(&mut byte) {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) => line.push(byte[0]),
            Ok(_) if line.is_empty() => return None,
            Ok(_) => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

/// Standard input as a file of its own (a duplicate of fd 0), read without std's buffer.
fn stdin_file() -> Option<std::fs::File> {
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(std::fs::File::from)
}

/// How an attached command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attached {
    Ended(ExecExit),
    /// A signal ended flotilla's side of it first.
    Signal(&'static str),
}

/// The local terminal in raw mode until dropped (also on an error's early return and a
/// panic's unwinding).
struct RawMode;

impl RawMode {
    fn enter() -> Option<RawMode> {
        crossterm::terminal::enable_raw_mode()
            .ok()
            .map(|()| RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Wires a session to this process's stdin, stdout and stderr until the command ends or a
/// signal (SIGTERM, SIGHUP; SIGINT too when no terminal is in raw mode) ends flotilla's side;
/// with `tty` the local terminal is raw for the while and the remote one follows its size.
pub async fn attach(mut session: ExecSession, tty: bool) -> Attached {
    use tokio::signal::unix::{SignalKind, signal};
    let raw = if tty { RawMode::enter() } else { None };
    let stdin = session
        .stdin
        .take()
        .map(|remote| tokio::spawn(pump_stdin(remote)));
    let stdout = session
        .stdout
        .take()
        .map(|remote| tokio::spawn(pump(remote, tokio::io::stdout())));
    let stderr = session
        .stderr
        .take()
        .map(|remote| tokio::spawn(pump(remote, tokio::io::stderr())));
    let resize = session.resize.take().map(|sizes| {
        tokio::spawn(async move {
            let size = || {
                crossterm::terminal::size()
                    .ok()
                    .map(|(width, height)| TermSize { width, height })
            };
            if let Some(now) = size() {
                let _ = sizes.send(now).await;
            }
            let Ok(mut changes) = signal(SignalKind::window_change()) else {
                return;
            };
            while changes.recv().await.is_some() {
                if let Some(now) = size()
                    && sizes.send(now).await.is_err()
                {
                    break;
                }
            }
        })
    });
    let signals = async {
        let (Ok(mut interrupt), Ok(mut terminate), Ok(mut hangup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
            _ = hangup.recv() => "SIGHUP",
        }
    };
    let ended = tokio::select! {
        exit = &mut session.exit => Attached::Ended(exit),
        signal = signals => Attached::Signal(signal),
    };
    // What the command printed before it ended is shown in full; a stream the cluster never
    // closes is given a moment, not forever.
    for task in [stdout, stderr].into_iter().flatten() {
        if matches!(ended, Attached::Ended(_)) {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), task).await;
        } else {
            task.abort();
        }
    }
    for task in [stdin, resize].into_iter().flatten() {
        task.abort();
    }
    drop(raw);
    ended
}

/// Copies a remote stream to a local one, flushing each chunk as it comes.
async fn pump(mut remote: Box<dyn AsyncRead + Send + Unpin>, mut local: impl AsyncWrite + Unpin) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match remote.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                if local.write_all(&buf[..read]).await.is_err() {
                    break;
                }
                let _ = local.flush().await;
            }
        }
    }
    let _ = local.flush().await;
}

/// Copies this process's stdin to the command's, ending it at end of input. A terminal or a
/// pipe is waited on through the runtime (so nothing is left reading the terminal when the
/// command ends and the task is dropped); a file is read on a thread of its own, which ends at
/// the file's end.
async fn pump_stdin(mut remote: Box<dyn AsyncWrite + Send + Unpin>) {
    use tokio::io::unix::AsyncFd;
    let Some(file) = stdin_file() else {
        let _ = remote.shutdown().await;
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    // Deprecated as unsound for a `T` that does not own its descriptor; a `File` does, for
    // as long as the `AsyncFd` holds it, which is the condition tokio's safe form asks for.
    #[allow(deprecated)]
    let registered = AsyncFd::try_with_interest(file, tokio::io::Interest::READABLE);
    match registered {
        Ok(fd) => loop {
            let Ok(mut ready) = fd.readable().await else {
                break;
            };
            // The descriptor is blocking: read once per readiness, then wait for the next.
            let mut file: &std::fs::File = fd.get_ref();
            let read = file.read(&mut buf);
            // A full buffer may have left more behind, which no new readiness would announce.
            if !matches!(read, Ok(n) if n == buf.len()) {
                ready.clear_ready();
            }
            match read {
                Ok(0) => break,
                Ok(read) => {
                    if remote.write_all(&buf[..read]).await.is_err() {
                        return;
                    }
                    let _ = remote.flush().await;
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        },
        Err(err) => {
            let (mut file, _) = err.into_parts();
            let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(read) = file.read(&mut buf) {
                    if read == 0 || tx.blocking_send(buf[..read].to_vec()).is_err() {
                        break;
                    }
                }
            });
            while let Some(chunk) = rx.recv().await {
                if remote.write_all(&chunk).await.is_err() {
                    return;
                }
                let _ = remote.flush().await;
            }
        }
    }
    let _ = remote.shutdown().await;
}
