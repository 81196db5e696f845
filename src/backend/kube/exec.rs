//! [`PodExec`] for a real cluster: `pods/exec` through kube-rs's WebSocket client, the
//! command's streams handed on as they are, its terminal resized on request, and its end read
//! from the API server's Status as kubectl reads it (`NonZeroExitCode` and its `ExitCode`
//! cause). A read-only cluster refuses before anything is sent. It must not touch the local
//! terminal or log what the command reads or writes.

use futures::SinkExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{Api, AttachParams, TerminalSize};

use super::api::{KubeCluster, map_error};
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::exec::{ExecExit, ExecRequest, ExecSession, PodExec, TermSize};

impl PodExec for KubeCluster {
    async fn exec(&self, request: &ExecRequest) -> Result<ExecSession, ApiError> {
        if self.is_readonly() {
            return Err(ApiError::Readonly);
        }
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &request.namespace);
        let params = AttachParams::default()
            .container(request.container.clone())
            .stdin(request.stdin)
            .stdout(true)
            .stderr(!request.tty)
            .tty(request.tty);
        let mut process = match pods
            .exec(&request.pod, request.command.clone(), &params)
            .await
        {
            Ok(process) => process,
            Err(err) => return Err(self.refused(request, exec_error(err)).await),
        };
        let resize = process.terminal_size().map(|mut sizes| {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<TermSize>(4);
            tokio::spawn(async move {
                while let Some(size) = rx.recv().await {
                    let size = TerminalSize {
                        width: size.width,
                        height: size.height,
                    };
                    if sizes.send(size).await.is_err() {
                        break;
                    }
                }
                let _ = sizes.close().await;
            });
            tx
        });
        let stdin = process
            .stdin()
            .map(|w| Box::new(w) as Box<dyn tokio::io::AsyncWrite + Send + Unpin>);
        let stdout = process
            .stdout()
            .map(|r| Box::new(r) as Box<dyn tokio::io::AsyncRead + Send + Unpin>);
        let stderr = process
            .stderr()
            .map(|r| Box::new(r) as Box<dyn tokio::io::AsyncRead + Send + Unpin>);
        let status = process.take_status();
        let exit = Box::pin(async move {
            let status = match status {
                Some(status) => status.await,
                None => None,
            };
            // The streams' task ends with the command; its error, if any, says why.
            let joined = process.join().await;
            match (status, joined) {
                (Some(status), _) => exit_of(&status),
                (None, Err(err)) => ExecExit::Failed(err.to_string()),
                (None, Ok(())) => {
                    ExecExit::Failed("the connection closed before the command ended".into())
                }
            }
        });
        Ok(ExecSession {
            stdin,
            stdout,
            stderr,
            resize,
            exit,
        })
    }
}

impl KubeCluster {
    /// Why the API server refused an exec, in its own words: the upgrade's answer carries only
    /// a status code, so the refused request is sent again without the upgrade, which the
    /// server refuses the same way before it could start anything, now with its Status (`pods
    /// "web-1" is forbidden: User "ci" cannot create resource "pods/exec" …`, as kubectl
    /// prints it). Other errors stay as they are.
    async fn refused(&self, request: &ExecRequest, error: ApiError) -> ApiError {
        let (ApiError::Unauthorized(message)
        | ApiError::Forbidden(message)
        | ApiError::NotFound(message)) = &error
        else {
            return error;
        };
        let path = format!(
            "/api/v1/namespaces/{}/pods/{}/exec?stdout=true&container={}",
            request.namespace, request.pod, request.container
        );
        let Ok(plain) = http::Request::post(path).body(Vec::new()) else {
            return error;
        };
        let reason = match self.client().request_text(plain).await {
            Err(kube::Error::Api(status)) if !status.message.is_empty() => status.message.clone(),
            _ => return error,
        };
        let message = format!("{message}: {reason}");
        match error {
            ApiError::Unauthorized(_) => ApiError::Unauthorized(message),
            ApiError::Forbidden(_) => ApiError::Forbidden(message),
            _ => ApiError::NotFound(message),
        }
    }
}

/// How the API server's Status says the command ended, as kubectl reads it.
pub fn exit_of(status: &Status) -> ExecExit {
    if status.status.as_deref() == Some("Success") {
        return ExecExit::Code(0);
    }
    let reason = status.reason.clone().unwrap_or_default();
    if reason == "NonZeroExitCode"
        && let Some(code) = status
            .details
            .iter()
            .flat_map(|details| details.causes.iter().flatten())
            .find(|cause| cause.reason.as_deref() == Some("ExitCode"))
            .and_then(|cause| cause.message.as_deref()?.trim().parse::<i32>().ok())
    {
        return ExecExit::Code(code);
    }
    ExecExit::Failed(
        status
            .message
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or(reason),
    )
}

/// Why `pods/exec` could not start: an upgrade refused by status, or the client's error.
fn exec_error(err: kube::Error) -> ApiError {
    use kube::client::UpgradeConnectionError;
    match err {
        kube::Error::UpgradeConnection(UpgradeConnectionError::ProtocolSwitch(code)) => {
            let message = format!("pods/exec: the API server answered {code}");
            match code.as_u16() {
                401 => ApiError::Unauthorized(message),
                403 => ApiError::Forbidden(message),
                404 => ApiError::NotFound(message),
                _ => ApiError::Other(message),
            }
        }
        other => match map_error(other) {
            ApiError::Retryable { message, .. } => ApiError::Unreachable(message),
            mapped => mapped,
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_status_reads_as_kubectl_reads_it() {
        let status: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "reason": "NonZeroExitCode",
            "message": "command terminated with non-zero exit code: exit status 3",
            "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}}))
        .unwrap();
        assert_eq!(exit_of(&status), ExecExit::Code(3));
        let ok: Status = serde_json::from_value(serde_json::json!({"status": "Success"})).unwrap();
        assert_eq!(exit_of(&ok), ExecExit::Code(0));
        let lost: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "reason": "InternalError", "message": "container not found"}))
        .unwrap();
        assert_eq!(
            exit_of(&lost),
            ExecExit::Failed("container not found".into())
        );
    }
}
