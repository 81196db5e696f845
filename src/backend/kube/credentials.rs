//! Running a kubeconfig user's `exec` credential plugin the way a background tool must: never
//! with a terminal (no stdin, its stderr captured, in a session of its own where `setsid` is
//! available, so it can neither prompt over the console nor read the operator's keys), within a
//! deadline, and killed with everything it started when the deadline passes or flotilla stops
//! waiting. The credential it prints replaces the `exec` entry of that one user, so kube-rs never
//! runs the plugin itself (kube-rs would run it synchronously, with the terminal, and without a
//! deadline). A plugin that cannot answer without a person is reported as "needs login", naming
//! the context. It must not show or log what the plugin prints on stdout: that is the credential.

use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use kube::config::{AuthInfo, ExecConfig, Kubeconfig};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt as _;

use crate::safe_text;

/// What kubectl tells the operator to do when a plugin needs a person.
pub fn needs_login(context: &str) -> String {
    format!("needs login: run `kubectl --context {context} get ns` once")
}

/// Replaces the `exec` plugin of `context`'s user (when that is the credential kube-rs would
/// use) with the token or client certificate the plugin prints. Without a plugin nothing runs.
pub async fn resolve_exec(
    kubeconfig: &mut Kubeconfig,
    context: &str,
    deadline: Duration,
) -> Result<(), String> {
    let Some(named_context) = kubeconfig
        .contexts
        .iter()
        .find(|named| named.name == context)
        .and_then(|named| named.context.clone())
    else {
        return Ok(());
    };
    let Some(user) = named_context.user.clone() else {
        return Ok(());
    };
    // What `provideClusterInfo` hands the plugin, as client-go builds it from the context's
    // cluster (its `client.authentication.k8s.io/exec` extension included).
    let cluster_info = kubeconfig
        .clusters
        .iter()
        .find(|named| named.name == named_context.cluster)
        .and_then(|named| named.cluster.as_ref())
        .and_then(|cluster| kube::config::ExecAuthCluster::try_from(cluster).ok());
    let Some(auth) = kubeconfig
        .auth_infos
        .iter_mut()
        .find(|named| named.name == user)
        .and_then(|named| named.auth_info.as_mut())
    else {
        return Ok(());
    };
    let Some(mut exec) = plugin_in_use(auth) else {
        return Ok(());
    };
    if exec.provide_cluster_info && exec.cluster.is_none() {
        exec.cluster = cluster_info;
    }
    let status = run_plugin(&exec, context, deadline).await?;
    if let (Some(cert), Some(key)) = (&status.client_certificate_data, &status.client_key_data) {
        let engine = base64::engine::general_purpose::STANDARD;
        auth.client_certificate_data = Some(engine.encode(cert));
        auth.client_key_data = Some(engine.encode(key).into());
    } else if let Some(token) = status.token {
        auth.token = Some(token.into());
    } else {
        return Err(format!(
            "the credential plugin of {context:?} printed no token or certificate; {}",
            needs_login(context)
        ));
    }
    auth.exec = None;
    Ok(())
}

/// The plugin kube-rs would run for this user: only when nothing it prefers is set.
fn plugin_in_use(auth: &AuthInfo) -> Option<ExecConfig> {
    let basic = auth.username.is_some() && auth.password.is_some();
    if auth.auth_provider.is_some() || basic || auth.token.is_some() || auth.token_file.is_some() {
        return None;
    }
    auth.exec.clone()
}

#[derive(Serialize)]
struct ExecInfo<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion", skip_serializing_if = "Option::is_none")]
    api_version: Option<&'a str>,
    spec: ExecSpec<'a>,
}

#[derive(Serialize)]
struct ExecSpec<'a> {
    interactive: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a kube::config::ExecAuthCluster>,
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<ExecStatus>,
}

#[derive(Deserialize)]
struct ExecStatus {
    token: Option<String>,
    #[serde(rename = "clientCertificateData")]
    client_certificate_data: Option<String>,
    #[serde(rename = "clientKeyData")]
    client_key_data: Option<String>,
}

/// Kills the plugin's process group (the plugin and whatever it started) unless disarmed.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

async fn run_plugin(
    exec: &ExecConfig,
    context: &str,
    deadline: Duration,
) -> Result<ExecStatus, String> {
    let Some(program) = exec.command.as_deref() else {
        return Err(format!(
            "the credential plugin of {context:?} names no command"
        ));
    };
    let mut command = match on_path("setsid") {
        // A session of its own: the plugin has no controlling terminal to prompt on.
        Some(setsid) => {
            let mut command = tokio::process::Command::new(setsid);
            command.arg(program);
            command
        }
        // A process group of its own: reading the terminal stops it instead.
        None => {
            let mut command = tokio::process::Command::new(program);
            command.process_group(0);
            command
        }
    };
    command.args(exec.args.iter().flatten());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            command.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        command.env_remove(name);
    }
    let info = ExecInfo {
        kind: "ExecCredential",
        api_version: exec.api_version.as_deref(),
        spec: ExecSpec {
            interactive: false,
            cluster: exec.cluster.as_ref().filter(|_| exec.provide_cluster_info),
        },
    };
    command.env(
        "KUBERNETES_EXEC_INFO",
        serde_json::to_string(&info).unwrap_or_default(),
    );
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|err| {
        let hint = exec
            .install_hint
            .as_deref()
            .map(|hint| format!("\n  hint: {}", safe_text::redact(hint.trim())))
            .unwrap_or_default();
        format!("cannot start the credential plugin {program:?} of {context:?}: {err}{hint}")
    })?;
    let mut guard = GroupKill(child.id());
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let finished = tokio::time::timeout(deadline, async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.read_to_end(&mut err).await;
            }
        };
        futures::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    })
    .await;
    let Ok((status, out, err)) = finished else {
        tracing::warn!(context, "credential plugin gave no answer in time; killed");
        return Err(format!(
            "the credential plugin gave no answer within {}s; {}",
            deadline.as_secs(),
            needs_login(context)
        ));
    };
    guard.0 = None;
    let out = String::from_utf8_lossy(&out).into_owned();
    let err = String::from_utf8_lossy(&err).into_owned();
    let status = status.map_err(|e| format!("credential plugin of {context:?}: {e}"))?;
    if !status.success() {
        let said = first_words(&safe_text::redact_known(&err, &[out.as_str()]));
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        let code = status
            .code()
            .map_or_else(|| "a signal".to_string(), |code| code.to_string());
        tracing::warn!(context, exit = %code, "credential plugin failed{}", said);
        return Err(format!(
            "the credential plugin failed (exit {code}){said}; {}",
            needs_login(context)
        ));
    }
    let parsed: Result<ExecCredential, _> = serde_saphyr::from_str(&out);
    match parsed {
        Ok(ExecCredential {
            status: Some(status),
        }) => Ok(status),
        _ => Err(format!(
            "the credential plugin printed no ExecCredential; {}",
            needs_login(context)
        )),
    }
}

/// The first line of what the plugin said on stderr, printable and not too long.
fn first_words(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty());
    let line: String = line.unwrap_or("").chars().take(200).collect();
    safe_text::printable(&line, false)
}

fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::*;

    fn kubeconfig_with_plugin(script: &Path) -> Kubeconfig {
        Kubeconfig::from_yaml(&format!(
            r#"
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "https://127.0.0.1:9"}}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: {}
      interactiveMode: IfAvailable
contexts:
- name: otp
  context: {{cluster: c, user: u}}
"#,
            script.display()
        ))
        .unwrap()
    }

    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[tokio::test]
    async fn a_plugin_that_waits_is_killed_with_its_children_and_needs_login() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let plugin = script(
            dir.path(),
            &format!("sleep 300 &\necho $! > {}\nwait", pid_file.display()),
        );
        let mut kubeconfig = kubeconfig_with_plugin(&plugin);
        let err = resolve_exec(&mut kubeconfig, "otp", Duration::from_millis(500))
            .await
            .unwrap_err();
        assert!(
            err.contains("needs login") && err.contains("kubectl --context otp get ns"),
            "{err}"
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let mut alive = true;
        for _ in 0..50 {
            let probe = std::process::Command::new("kill")
                .args(["-0", pid.trim()])
                .stderr(Stdio::null())
                .status()
                .unwrap();
            alive = probe.success();
            if !alive {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(!alive, "the plugin's child {pid} outlived the deadline");
    }

    #[tokio::test]
    async fn a_plugin_reads_no_terminal_and_its_token_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = script(
            dir.path(),
            r#"read line && exit 7
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-123456"}}'"#,
        );
        let mut kubeconfig = kubeconfig_with_plugin(&plugin);
        resolve_exec(&mut kubeconfig, "otp", Duration::from_secs(10))
            .await
            .unwrap();
        let auth = kubeconfig.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(auth.exec.is_none());
        assert!(auth.token.is_some());
    }

    #[tokio::test]
    async fn a_failing_plugin_says_needs_login_without_its_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = script(
            dir.path(),
            "echo 'tok-SECRET-42'\necho 'OTP required, tok-SECRET-42 expired' >&2\nexit 1",
        );
        let mut kubeconfig = kubeconfig_with_plugin(&plugin);
        let err = resolve_exec(&mut kubeconfig, "otp", Duration::from_secs(10))
            .await
            .unwrap_err();
        assert!(!err.contains("tok-SECRET-42"), "{err}");
        assert!(
            err.contains("exit 1") && err.contains("needs login"),
            "{err}"
        );
    }

    /// client-go's `provideClusterInfo`: the plugin is told the context's cluster, with the
    /// `client.authentication.k8s.io/exec` extension as `spec.cluster.config` (what
    /// cluster-inventory-api's secretreader plugin reads its cluster name from).
    #[tokio::test]
    async fn provide_cluster_info_hands_the_plugin_the_clusters_exec_extension() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = script(
            dir.path(),
            r#"case "$KUBERNETES_EXEC_INFO" in *'"config":{"clusterName":"m1"}'*) ;; *) echo "$KUBERNETES_EXEC_INFO" >&2; exit 3;; esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-1"}}'"#,
        );
        let mut kubeconfig = Kubeconfig::from_yaml(&format!(
            r#"
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: "https://127.0.0.1:9"
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {{clusterName: m1}}
users:
- name: u
  user:
    exec: {{apiVersion: client.authentication.k8s.io/v1, command: {}, provideClusterInfo: true}}
contexts:
- name: m
  context: {{cluster: c, user: u}}
"#,
            plugin.display()
        ))
        .unwrap();
        resolve_exec(&mut kubeconfig, "m", Duration::from_secs(10))
            .await
            .unwrap();
        assert!(
            kubeconfig.auth_infos[0]
                .auth_info
                .as_ref()
                .unwrap()
                .token
                .is_some()
        );
    }
}
