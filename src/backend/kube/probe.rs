//! Probing one cluster's connection: `/version` for reachability, version and latency, then
//! `/readyz` for readiness. Each probe has its own timeout so a dead cluster costs only its own
//! time. It must not send anything but these two GETs.

use std::time::{Duration, Instant};

use kube::Client;

use crate::model::{ClusterStatus, Health};
use crate::safe_text;

/// Probes a cluster; never fails, the outcome is the status.
pub async fn probe(client: &Client, timeout: Duration) -> ClusterStatus {
    let started = Instant::now();
    let version = match tokio::time::timeout(timeout, client.apiserver_version()).await {
        Err(_) => {
            return unreachable(format!(
                "no answer within {}s",
                timeout.as_secs_f32().round()
            ));
        }
        Ok(Err(err)) => return from_error(&err),
        Ok(Ok(info)) => info.git_version,
    };
    let cold_ms = started.elapsed().as_millis() as u64;
    let request = http::Request::get("/readyz").body(Vec::new());
    // The second request rides the connection the first one opened, so its time is the round
    // trip an operator cares about; the first also paid for TCP and TLS set-up.
    let ready_started = Instant::now();
    let readiness = match request {
        Ok(request) => tokio::time::timeout(timeout, client.request_text(request)).await,
        Err(err) => return unreachable(format!("cannot build /readyz request: {err}")),
    };
    let latency_ms = if readiness.is_ok() {
        ready_started.elapsed().as_millis() as u64
    } else {
        cold_ms
    };
    let (health, message) = match readiness {
        Ok(Ok(text)) if text.trim() == "ok" => (Health::Ready, String::new()),
        Ok(Ok(text)) => (
            Health::NotReady,
            format!("readyz: {}", safe_text::redact(first_line(&text))),
        ),
        Ok(Err(kube::Error::Api(status))) if status.code == 401 => {
            (Health::Unauthorized, "credentials rejected (401)".into())
        }
        Ok(Err(err)) => (Health::NotReady, format!("readyz: {}", short_error(&err))),
        Err(_) => (Health::NotReady, "readyz did not answer in time".into()),
    };
    ClusterStatus {
        health,
        version: Some(version),
        latency_ms: Some(latency_ms),
        message,
    }
}

fn unreachable(message: String) -> ClusterStatus {
    ClusterStatus {
        health: Health::Unreachable,
        version: None,
        latency_ms: None,
        message,
    }
}

fn from_error(err: &kube::Error) -> ClusterStatus {
    match err {
        kube::Error::Api(status) if status.code == 401 => ClusterStatus {
            health: Health::Unauthorized,
            version: None,
            latency_ms: None,
            message: "credentials rejected (401): check the context's user".into(),
        },
        kube::Error::Api(status) if status.code == 403 => ClusterStatus {
            health: Health::Unauthorized,
            version: None,
            latency_ms: None,
            message: format!("forbidden (403): {}", safe_text::redact(&status.message)),
        },
        other => match super::retry_after::throttled(other) {
            // It answered: throttled, not unreachable.
            Some(note) => ClusterStatus {
                health: Health::NotReady,
                version: None,
                latency_ms: None,
                message: note,
            },
            None => unreachable(short_error(other)),
        },
    }
}

/// An error as one readable line, with the innermost cause (e.g. "Connection refused"), with
/// credentials redacted (URLs in errors carry userinfo, plugin failures carry tokens) and
/// control characters escaped: what every message shown or logged is built from.
pub fn short_error(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    let mut innermost = None;
    while let Some(cause) = source {
        innermost = Some(cause.to_string());
        source = cause.source();
    }
    if let Some(cause) = innermost
        && !text.contains(&cause)
    {
        text = format!("{text}: {cause}");
    }
    if let Some(explained) = certificate_rejected(&text) {
        text = explained;
    }
    safe_text::printable(&safe_text::redact(first_line(&text)), false)
}

/// A server certificate the client refused, said as what it means to the operator: rustls
/// names only the reason (`invalid peer certificate: UnknownIssuer`), deep in a chain of
/// "client error (Connect)" wrappers.
fn certificate_rejected(text: &str) -> Option<String> {
    const MARK: &str = "invalid peer certificate: ";
    let at = text.find(MARK)?;
    let reason = first_line(&text[at + MARK.len()..]);
    let meaning = if reason.starts_with("UnknownIssuer") {
        "it is not signed by the certificate authority the kubeconfig trusts for this cluster; \
         if the cluster's CA changed, update the cluster's certificate-authority-data"
    } else if reason.starts_with("Expired") {
        "it has expired"
    } else if reason.starts_with("NotValidForName") {
        "it is not valid for the server address in the kubeconfig"
    } else {
        "it is not trusted"
    };
    Some(format!(
        "TLS: the API server's certificate was rejected ({reason}): {meaning}"
    ))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod throttle_tests {
    use super::*;

    #[test]
    fn a_rejected_server_certificate_says_what_to_check() {
        let text = "ServiceError: client error (Connect): invalid peer certificate: UnknownIssuer";
        let explained = certificate_rejected(text).unwrap();
        assert!(explained.starts_with("TLS: "), "{explained}");
        assert!(explained.contains("(UnknownIssuer)"), "{explained}");
        assert!(
            explained.contains("certificate-authority-data"),
            "{explained}"
        );
        assert_eq!(
            certificate_rejected("client error (Connect): Connection refused"),
            None
        );
    }

    #[test]
    fn a_throttled_probe_is_an_answering_cluster_with_the_throttle_named() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "message": "busy", "code": 429,
            "details": { "retryAfterSeconds": 3 },
        }))
        .unwrap();
        let observed = from_error(&kube::Error::Api(status.boxed()));
        assert_eq!(observed.health, Health::NotReady);
        assert_eq!(
            observed.message,
            "throttled by the API server (429), retrying after 3s"
        );
    }
}
