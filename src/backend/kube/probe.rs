//! Probing one cluster's connection: `/readyz` for reachability and readiness, then
//! `/version` for the version and the round trip on the warm connection. Each request has its
//! own timeout so a dead cluster costs only its own time. It must not send anything but these
//! two GETs.

use std::time::{Duration, Instant};

use kube::Client;

use crate::model::{ClusterStatus, Health};
use crate::safe_text;

/// Probes a cluster: [`readiness`], then [`add_version`] when it answered. Never fails; the
/// outcome is the status.
pub async fn probe(client: &Client, timeout: Duration) -> ClusterStatus {
    let mut observed = readiness(client, timeout).await;
    if answered(&observed) {
        add_version(client, timeout, &mut observed).await;
    }
    observed
}

/// Whether the API server answered the probe, ready or not.
pub fn answered(observed: &ClusterStatus) -> bool {
    matches!(observed.health, Health::Ready | Health::NotReady)
}

/// The cluster's health as its `/readyz` says, without a version. This is the first request
/// on a new client, so its latency includes the TCP and TLS set-up; a cluster's health is
/// known after one answer rather than two.
pub async fn readiness(client: &Client, timeout: Duration) -> ClusterStatus {
    let started = Instant::now();
    let request = match http::Request::get("/readyz").body(Vec::new()) {
        Ok(request) => request,
        Err(err) => return unreachable(format!("cannot build /readyz request: {err}")),
    };
    let answer = match tokio::time::timeout(timeout, client.request_text(request)).await {
        Err(_) => {
            return unreachable(format!(
                "no answer within {}s",
                timeout.as_secs_f32().round()
            ));
        }
        Ok(answer) => answer,
    };
    let (health, message) = match answer {
        Ok(text) if text.trim() == "ok" => (Health::Ready, String::new()),
        Ok(text) => (Health::NotReady, not_ready(&text)),
        Err(kube::Error::Api(status)) if !matches!(status.code, 401 | 403 | 429) => {
            (Health::NotReady, not_ready(&status.message))
        }
        Err(err) => return from_error(&err),
    };
    ClusterStatus {
        health,
        version: None,
        latency_ms: Some(started.elapsed().as_millis() as u64),
        message,
    }
}

/// Asks an answering cluster's `/version` over the connection [`readiness`] opened: the
/// version, and its round trip as the latency an operator cares about. A cluster that does not
/// answer it keeps its health and the first request's latency.
pub async fn add_version(client: &Client, timeout: Duration, observed: &mut ClusterStatus) {
    let started = Instant::now();
    if let Ok(Ok(info)) = tokio::time::timeout(timeout, client.apiserver_version()).await {
        observed.version = Some(info.git_version);
        observed.latency_ms = Some(started.elapsed().as_millis() as u64);
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

/// What a failing `/readyz` says, as one line: its first failed check (`[-]etcd failed: …`)
/// when it lists them.
fn not_ready(text: &str) -> String {
    let failed = text
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("[-]"));
    let line = failed.unwrap_or_else(|| first_line(text));
    format!(
        "readyz: {}",
        safe_text::printable(&safe_text::redact(line), false)
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod throttle_tests {
    use super::*;

    #[test]
    fn a_failing_readyz_is_named_by_its_first_failed_check() {
        let text = "[+]ping ok\n[-]etcd failed: reason withheld\n[-]log ok\nreadyz check failed";
        assert_eq!(not_ready(text), "readyz: [-]etcd failed: reason withheld");
        assert_eq!(not_ready("shutting down\n"), "readyz: shutting down");
    }

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
