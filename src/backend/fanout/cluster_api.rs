//! The small per-cluster API that plan, apply and drift are written against
//! ([`ClusterApi`]), the errors a cluster can answer with (and the managers an apply conflict
//! names), and the per-cluster guards every request goes through: a token bucket, a request
//! timeout and retries with backoff on 429, 5xx and timeouts. Implemented by the kube backend
//! and by the latency-injecting fake. It must not decide what to apply; plan, apply and drift
//! do that.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::model::ResourceRef;

/// How a cluster refused or failed a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// No connection, or no answer in time.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// Credentials rejected (401).
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// The credentials may not do this (403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The cluster does not serve this kind (no such API resource).
    #[error("kind not served: {0}")]
    NotServed(String),
    /// 404 for something other than the kind (e.g. the namespace does not exist).
    #[error("not found: {0}")]
    NotFound(String),
    /// Server-side apply conflict with other field managers (409).
    #[error("conflict with {}: {message}", managers.join(", "))]
    Conflict {
        managers: Vec<String>,
        message: String,
    },
    /// The object was refused (422); `immutable` when a field cannot change in place.
    #[error("{}{message}", if *immutable { "needs recreate: " } else { "invalid: " })]
    Invalid { message: String, immutable: bool },
    /// Throttled (429), a server error (5xx) or a timeout: worth retrying.
    #[error("{0}")]
    Retryable(String),
    /// A read-only backend was asked to write; nothing was sent.
    #[error("read-only: refusing to send a mutating request")]
    Readonly,
    #[error("{0}")]
    Other(String),
}

impl ApiError {
    /// Errors that say the whole cluster cannot be worked on (not just this object); after one,
    /// no further writes go to that cluster.
    pub fn is_cluster_fatal(&self) -> bool {
        matches!(
            self,
            ApiError::Unreachable(_)
                | ApiError::Unauthorized(_)
                | ApiError::Forbidden(_)
                | ApiError::Readonly
        )
    }
}

/// Managers named in an apply conflict message: `conflict with "kubectl" using apps/v1: …`.
pub fn conflict_managers(message: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in message.split("conflict with \"").skip(1) {
        if let Some((name, _)) = part.split_once('"')
            && !out.iter().any(|known| known == name)
        {
            out.push(name.to_string());
        }
    }
    out
}

/// How an apply is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApplyMode {
    /// `dryRun=All`: the server validates, defaults and answers, and stores nothing.
    pub dry_run: bool,
    /// Take fields other managers own.
    pub force: bool,
}

/// One cluster's API as flotilla uses it. Every method is one logical request (an
/// implementation may add one discovery round trip the first time it meets a kind it cannot
/// resolve), and none of them retries or times out by itself: [`Guard`] does that.
pub trait ClusterApi: Send + Sync {
    /// The kinds the cluster serves, as (apiVersion, kind).
    fn discover(&self) -> impl Future<Output = Result<Vec<(String, String)>, ApiError>> + Send;
    /// The live object, or `None` when it does not exist.
    fn get(
        &self,
        resource: &ResourceRef,
    ) -> impl Future<Output = Result<Option<Value>, ApiError>> + Send;
    /// Server-side apply of `object` with field manager `flotilla`; the answer is the object
    /// as stored (or, with `dry_run`, as it would be stored).
    fn apply(
        &self,
        object: &Value,
        mode: ApplyMode,
    ) -> impl Future<Output = Result<Value, ApiError>> + Send;
    /// Deletes an object; a missing object is success.
    fn delete(&self, resource: &ResourceRef) -> impl Future<Output = Result<(), ApiError>> + Send;
    /// Every object of one kind that carries flotilla's ownership label, in all namespaces.
    fn list_managed(
        &self,
        api_version: &str,
        kind: &str,
    ) -> impl Future<Output = Result<Vec<Value>, ApiError>> + Send;
}

/// A token bucket: `rate` requests per second on average, bursts up to `burst`.
#[derive(Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    pub fn new(rate: f64, burst: u32) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            rate: rate.max(0.001),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Takes one token, waiting until one is available.
    pub async fn acquire(&self) {
        let wait = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let now = Instant::now();
            let (tokens, last) = *state;
            let refilled =
                (tokens + now.duration_since(last).as_secs_f64() * self.rate).min(self.burst);
            let left = refilled - 1.0;
            *state = (left, now);
            if left >= 0.0 {
                None
            } else {
                Some(Duration::from_secs_f64(-left / self.rate))
            }
        };
        if let Some(wait) = wait {
            tokio::time::sleep(wait).await;
        }
    }
}

/// Per-cluster request policy.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests per second per cluster (token bucket rate) and its burst.
    pub qps: f64,
    pub burst: u32,
    /// Requests in flight per cluster.
    pub in_flight: usize,
    /// Time allowed for one request.
    pub request_timeout: Duration,
    /// Attempts after the first on 429, 5xx and timeouts.
    pub retries: u32,
    /// First backoff; doubled each retry.
    pub backoff: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            qps: 50.0,
            burst: 100,
            in_flight: 8,
            request_timeout: Duration::from_secs(10),
            retries: 3,
            backoff: Duration::from_millis(200),
        }
    }
}

/// Every request to one cluster goes through its guard: token bucket, timeout, retries.
#[derive(Debug)]
pub struct Guard {
    bucket: TokenBucket,
    limits: Limits,
}

impl Guard {
    pub fn new(limits: Limits) -> Guard {
        Guard {
            bucket: TokenBucket::new(limits.qps, limits.burst),
            limits,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Runs `request` (made afresh for every attempt) under the cluster's limits.
    pub async fn call<T, F, Fut>(&self, mut request: F) -> Result<T, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let mut backoff = self.limits.backoff;
        let mut attempt = 0;
        loop {
            self.bucket.acquire().await;
            let outcome = match tokio::time::timeout(self.limits.request_timeout, request()).await {
                Ok(outcome) => outcome,
                Err(_) => Err(ApiError::Retryable(format!(
                    "no answer within {}s",
                    self.limits.request_timeout.as_secs_f32()
                ))),
            };
            match outcome {
                Err(ApiError::Retryable(reason)) if attempt >= self.limits.retries => {
                    return Err(if reason.starts_with("no answer") {
                        ApiError::Unreachable(reason)
                    } else {
                        ApiError::Other(reason)
                    });
                }
                Err(ApiError::Retryable(_)) => {
                    attempt += 1;
                    tokio::time::sleep(backoff).await;
                    backoff = backoff.saturating_mul(2);
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn conflict_messages_name_their_managers() {
        let message = "Apply failed with 2 conflicts: conflict with \"kubectl\" using apps/v1: \
                       .spec.replicas\nconflict with \"kubectl\" using apps/v1: .spec.x\n\
                       conflict with \"helm\": .data";
        assert_eq!(conflict_managers(message), ["kubectl", "helm"]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_bucket_spaces_requests_after_the_burst() {
        let bucket = TokenBucket::new(10.0, 2);
        let start = Instant::now();
        for _ in 0..4 {
            bucket.acquire().await;
        }
        // Two free, then two at 100 ms each.
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(199), "{waited:?}");
        assert!(waited < Duration::from_millis(300), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn retryable_errors_are_retried_then_reported() {
        let guard = Guard::new(Limits::default());
        let calls = AtomicU32::new(0);
        let result: Result<(), ApiError> = guard
            .call(|| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < 2 {
                        Err(ApiError::Retryable("429 too many requests".into()))
                    } else {
                        Ok(())
                    }
                }
            })
            .await;
        assert!(result.is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let forbidden: Result<(), ApiError> = guard
            .call(|| async { Err(ApiError::Forbidden("no".into())) })
            .await;
        assert_eq!(forbidden, Err(ApiError::Forbidden("no".into())));
        let slow: Result<(), ApiError> = guard
            .call(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(())
            })
            .await;
        assert!(matches!(slow, Err(ApiError::Unreachable(_))), "{slow:?}");
    }
}
