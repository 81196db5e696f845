//! A live cluster's pod logs: `GET pods/NAME/log` with `timestamps=true`, read as a stream of
//! lines (following when asked). It only reads; a refusal becomes the fan-out's [`ApiError`]
//! as every other request's does, with no credential in it.

use futures::{AsyncBufReadExt, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::LogParams;

use super::api::{KubeCluster, map_error};
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::logs::{LogRequest, LogStream, PodLogs};

/// The query kubectl sends for the same flags (timestamps always: lines are interleaved by
/// them).
pub fn log_params(request: &LogRequest) -> LogParams {
    LogParams {
        container: Some(request.container.clone()),
        follow: request.follow,
        previous: request.previous,
        since_seconds: request.since_seconds.map(|s| s.min(i64::MAX as u64) as i64),
        tail_lines: request.tail_lines.map(|n| n.min(i64::MAX as u64) as i64),
        timestamps: true,
        ..LogParams::default()
    }
}

impl PodLogs for KubeCluster {
    async fn pod_logs(&self, request: &LogRequest) -> Result<LogStream, ApiError> {
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &request.namespace);
        let reader = pods
            .log_stream(&request.pod, &log_params(request))
            .await
            .map_err(map_error)?;
        Ok(reader
            .lines()
            .map_err(|err| ApiError::Unreachable(format!("the log stream broke: {err}")))
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_asks_for_timestamps_and_passes_the_flags() {
        let params = log_params(&LogRequest {
            container: "web".into(),
            since_seconds: Some(300),
            tail_lines: Some(10),
            previous: true,
            ..LogRequest::default()
        });
        assert!(params.timestamps && params.previous && !params.follow);
        assert_eq!(params.since_seconds, Some(300));
        assert_eq!(params.tail_lines, Some(10));
        assert_eq!(params.container.as_deref(), Some("web"));
    }
}
