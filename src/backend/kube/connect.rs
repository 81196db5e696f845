//! Reaching the fleet's member clusters: a client per kubeconfig context, built concurrently,
//! and probes of every member with a bound on how many are in flight, each with its own
//! timeout, so a slow or dead cluster never holds up another. It only connects and probes; it
//! must not send anything else.

use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::config::Kubeconfig;

use super::{kubeconfig, probe};
use crate::model::{ClusterSpec, ClusterStatus};
use crate::safe_text;

/// A fleet member and its client (or why it has none).
pub struct Member {
    pub spec: ClusterSpec,
    pub client: Result<Client, kubeconfig::ClientError>,
}

/// Builds a client per cluster, concurrently.
pub async fn connect(
    kubeconfig: &Kubeconfig,
    specs: Vec<ClusterSpec>,
    timeouts: kubeconfig::Timeouts,
) -> Vec<Member> {
    let futures = specs.into_iter().map(|spec| async move {
        let client = kubeconfig::client_for(kubeconfig, &spec.context, timeouts).await;
        Member { spec, client }
    });
    futures::future::join_all(futures).await
}

/// Probes every member with at most `concurrency` in flight; results keep member order.
pub async fn probe_all(
    members: &[Member],
    concurrency: usize,
    timeout: Duration,
) -> Vec<ClusterStatus> {
    futures::stream::iter(members.iter())
        .map(|member| async move {
            match &member.client {
                Ok(client) => probe::probe(client, timeout).await,
                Err(reason) => ClusterStatus {
                    health: reason.health(),
                    version: None,
                    latency_ms: None,
                    message: safe_text::redact(&reason.to_string()),
                },
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}
