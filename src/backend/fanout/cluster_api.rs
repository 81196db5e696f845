//! The small per-cluster API that plan, apply and drift are written against
//! ([`ClusterApi`]), the errors a cluster can answer with (and the managers an apply conflict
//! names), and the per-cluster guard every request goes through. Implemented by the kube
//! backend and by the latency-injecting fake. It must not decide what to apply; plan, apply
//! and drift do that.
//!
//! # The request policy
//! This is flotilla's only retry layer: the kube client is built with kube-rs's own retries
//! off (`backend/kube/kubeconfig.rs`), and [`ClusterApi`] implementations never retry.
//! [`Guard::call`] runs one logical request as attempts, each after a token from the cluster's
//! [`TokenBucket`]:
//! - **Per-attempt timeout** ([`Limits::request_timeout`], 10 s): every attempt gets all of it,
//!   however long earlier attempts and waits took (cut short only when less budget is left).
//! - **Retry budget** ([`Limits::retry_budget`], 30 s): attempts, bucket waits and retry waits
//!   together. A retry whose wait would end past the budget is not made: the request fails at
//!   once with the last answer and "gave up after N attempts in Xs (retry budget 30s)". At most
//!   [`Limits::retries`] retries (8) even within the budget.
//! - **Retryable** ([`ApiError::Retryable`]): 429, 5xx except 501, a reset, aborted or broken
//!   connection, a cut-off answer, and no answer in time. Nothing else is retried: a 4xx other
//!   than 429 (and 501) is the cluster's answer, returned as is.
//! - **Wait**: the server's `Retry-After` on 429 and 503 (delay-seconds or an HTTP-date, see
//!   [`parse_retry_after`]; from the header, or from the Status body's `retryAfterSeconds`),
//!   at least that long; otherwise jittered exponential backoff (200 ms doubling to 5 s, plus
//!   up to as much again at random, from `backon`).
//! - **Throttled, not unreachable**: a 429 sets the guard's note ([`Guard::throttled`], e.g.
//!   "throttled by the API server (429), retrying after 2s"), cleared by the next other
//!   answer; a 429 that outlasts the budget is [`ApiError::Throttled`]. Health keeps its five
//!   values (design §3): a throttled cluster answered, so it is never `Unreachable`; "throttled"
//!   is its message detail, or a cell's reason. Only no answer (connection errors, timeouts)
//!   that outlasts the budget is `Unreachable`; other 5xx become `Other`.
//! - **Maybe carried out**: an `Unreachable` after an attempt that got no answer (a dropped
//!   connection, a timeout) says the request may still have been carried out.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use backon::BackoffBuilder;
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
    /// Worth retrying: throttled (429), unavailable (503) or another server error (5xx but
    /// 501), a reset connection, or no answer in time (`status` is `None` for the last two).
    /// `retry_after` is the wait the server asked for, if it named one. Only [`Guard`] sees
    /// this: it retries, and past the budget turns it into `Throttled`, `Other` or
    /// `Unreachable`.
    #[error("{message}")]
    Retryable {
        status: Option<u16>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// The cluster answered, but kept throttling (429) until the retry budget ran out: it is
    /// reachable and busy, never reported as unreachable.
    #[error("{message}")]
    Throttled {
        message: String,
        retry_after: Option<Duration>,
    },
    /// A read-only backend was asked to write; nothing was sent.
    #[error("read-only: refusing to send a mutating request")]
    Readonly,
    #[error("{0}")]
    Other(String),
}

impl ApiError {
    /// Errors that say the whole cluster cannot be worked on (not just this object); after one,
    /// no further writes go to that cluster. A cluster still throttling after a whole retry
    /// budget is one: more writes would only add to its load.
    pub fn is_cluster_fatal(&self) -> bool {
        matches!(
            self,
            ApiError::Unreachable(_)
                | ApiError::Unauthorized(_)
                | ApiError::Forbidden(_)
                | ApiError::Throttled { .. }
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
    /// Objects of one kind in one namespace, selected as `kubectl get -l LABELS
    /// --field-selector FIELDS` selects them (an empty selector selects all). Reads only.
    fn list(&self, query: &ListQuery) -> impl Future<Output = Result<Vec<Value>, ApiError>> + Send;
}

/// What [`ClusterApi::list`] lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub labels: String,
    pub fields: String,
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

/// Per-cluster request policy (the module header says how it is applied).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests per second per cluster (token bucket rate) and its burst.
    pub qps: f64,
    pub burst: u32,
    /// Requests in flight per cluster.
    pub in_flight: usize,
    /// Time allowed for one attempt. Every attempt gets all of it, however long earlier
    /// attempts and waits took, as long as the retry budget lasts.
    pub request_timeout: Duration,
    /// Time allowed for one logical request: every attempt, every wait for the token bucket
    /// and every backoff or `Retry-After` wait together.
    pub retry_budget: Duration,
    /// Attempts after the first, at most (the budget usually ends retries first).
    pub retries: u32,
    /// First backoff; doubled each retry, up to `max_backoff`, plus up to as much again of
    /// random jitter.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            qps: 50.0,
            burst: 100,
            in_flight: 8,
            request_timeout: Duration::from_secs(10),
            retry_budget: Duration::from_secs(30),
            retries: 8,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// The note a throttled request leaves: `throttled by the API server (429), retrying after 2s`.
pub fn throttled_note(wait: Duration) -> String {
    format!(
        "throttled by the API server (429), retrying after {}",
        seconds(wait)
    )
}

fn seconds(span: Duration) -> String {
    let secs = span.as_secs_f64();
    if secs >= 10.0 || secs.fract() == 0.0 {
        format!("{}s", secs.round())
    } else {
        format!("{secs:.1}s")
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date (IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`), taken as the time left from `now` (zero when past).
/// `None` when it is neither.
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = parse_imf_fixdate(value)?;
    let now = now.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_imf_fixdate(value: &str) -> Option<u64> {
    let (_weekday, rest) = value.split_once(", ")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let clock: Vec<i64> = time
        .split(':')
        .map(|part| part.parse().ok())
        .collect::<Option<_>>()?;
    let [hour, minute, second] = clock.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *hour > 23 || *minute > 59 || *second > 60 {
        return None;
    }
    // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

/// The message of a request that ended unreachable after an attempt got no answer.
fn maybe_done(message: String) -> String {
    format!("{message} (an attempt got no answer and may still have been carried out)")
}

/// Every request to one cluster goes through its guard: token bucket, per-attempt timeout,
/// retries within the retry budget.
#[derive(Debug)]
pub struct Guard {
    bucket: TokenBucket,
    limits: Limits,
    throttled: Mutex<Option<String>>,
}

impl Guard {
    pub fn new(limits: Limits) -> Guard {
        Guard {
            bucket: TokenBucket::new(limits.qps, limits.burst),
            limits,
            throttled: Mutex::new(None),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The latest throttling note ([`throttled_note`]) while the cluster is throttling
    /// requests; cleared by the next request it answers without a 429. For a cluster's
    /// message (it is reachable, only busy) or a cell's reason.
    pub fn throttled(&self) -> Option<String> {
        self.throttled.lock().ok().and_then(|note| note.clone())
    }

    fn note_throttled(&self, note: Option<String>) {
        if let Ok(mut slot) = self.throttled.lock() {
            *slot = note;
        }
    }

    /// Runs `request` (made afresh for every attempt) under the cluster's limits.
    pub async fn call<T, F, Fut>(&self, request: F) -> Result<T, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        self.call_counting_throttles(request).await.0
    }

    /// [`Guard::call`], also counting the attempts the server throttled (429), so a result
    /// that came late because the cluster was busy can say so.
    pub async fn call_counting_throttles<T, F, Fut>(
        &self,
        mut request: F,
    ) -> (Result<T, ApiError>, u32)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let mut throttles: u32 = 0;
        // An attempt the connection dropped or the clock cut off may still have been carried
        // out by the server; a later "connection refused" must not hide that.
        let mut unanswered = false;
        let limits = &self.limits;
        let started = Instant::now();
        let deadline = started + limits.retry_budget;
        let mut backoff = backon::ExponentialBuilder::default()
            .with_min_delay(limits.backoff)
            .with_max_delay(limits.max_backoff.max(limits.backoff))
            .with_factor(2.0)
            .with_jitter()
            .without_max_times()
            .build();
        let mut attempts: u32 = 0;
        loop {
            self.bucket.acquire().await;
            attempts += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            let allowed = limits.request_timeout.min(left);
            let outcome = match tokio::time::timeout(allowed, request()).await {
                Ok(outcome) => outcome,
                Err(_) => Err(ApiError::Retryable {
                    status: None,
                    message: format!("no answer within {}", seconds(allowed)),
                    retry_after: None,
                }),
            };
            let (status, message, retry_after) = match outcome {
                Err(ApiError::Retryable {
                    status,
                    message,
                    retry_after,
                }) => (status, message, retry_after),
                Err(ApiError::Unreachable(message)) if unanswered => {
                    self.note_throttled(None);
                    return (Err(ApiError::Unreachable(maybe_done(message))), throttles);
                }
                other => {
                    self.note_throttled(None);
                    return (other, throttles);
                }
            };
            unanswered |= status.is_none();
            let jittered = backoff.next().unwrap_or(limits.max_backoff);
            let wait = retry_after.unwrap_or(jittered);
            let throttled = status == Some(429);
            if throttled {
                throttles += 1;
                let note = throttled_note(wait);
                tracing::warn!("{note}: {message}");
                self.note_throttled(Some(note));
            }
            let now = Instant::now();
            let ended = if attempts > limits.retries {
                Some(format!("gave up after {attempts} attempts"))
            } else if now + wait >= deadline {
                Some(format!(
                    "gave up after {attempts} attempts in {} (retry budget {}{})",
                    seconds(now - started),
                    seconds(limits.retry_budget),
                    match retry_after {
                        Some(asked) => format!("; the server asked to wait {}", seconds(asked)),
                        None => String::new(),
                    }
                ))
            } else {
                None
            };
            if let Some(ended) = ended {
                let message = format!("{message}; {ended}");
                let err = match status {
                    Some(429) => ApiError::Throttled {
                        message: format!("throttled by the API server (429): {message}"),
                        retry_after,
                    },
                    Some(_) => ApiError::Other(message),
                    None => ApiError::Unreachable(maybe_done(message)),
                };
                return (Err(err), throttles);
            }
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;
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

    fn throttled(after: Option<u64>) -> ApiError {
        ApiError::Retryable {
            status: Some(429),
            message: "429 Too many requests, please try again later.".into(),
            retry_after: after.map(Duration::from_secs),
        }
    }

    fn unavailable() -> ApiError {
        ApiError::Retryable {
            status: Some(500),
            message: "500 etcdserver: leader changed".into(),
            retry_after: None,
        }
    }

    /// Answers with `answers` in turn (then success), recording when each attempt started.
    struct Script {
        answers: Mutex<Vec<ApiError>>,
        starts: Mutex<Vec<Instant>>,
    }

    impl Script {
        fn new(mut answers: Vec<ApiError>) -> Script {
            answers.reverse();
            Script {
                answers: Mutex::new(answers),
                starts: Mutex::new(Vec::new()),
            }
        }

        fn attempt(&self) -> impl Future<Output = Result<(), ApiError>> + use<> {
            self.starts.lock().unwrap().push(Instant::now());
            let answer = self.answers.lock().unwrap().pop();
            async move { answer.map_or(Ok(()), Err) }
        }

        fn starts(&self) -> Vec<Instant> {
            self.starts.lock().unwrap().clone()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_is_honoured_before_the_next_attempt() {
        let guard = Guard::new(Limits::default());
        let script = Script::new(vec![throttled(Some(7))]);
        let result = guard.call(|| script.attempt()).await;
        assert_eq!(result, Ok(()));
        let starts = script.starts();
        assert_eq!(starts.len(), 2);
        let waited = starts[1] - starts[0];
        assert!(waited >= Duration::from_secs(7), "{waited:?}");
        assert!(waited < Duration::from_secs(8), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_throttled_attempts_of_a_call_are_counted() {
        let guard = Guard::new(Limits::default());
        let script = Script::new(vec![throttled(Some(1)), unavailable(), throttled(None)]);
        let (result, throttles) = guard.call_counting_throttles(|| script.attempt()).await;
        assert_eq!(result, Ok(()));
        assert_eq!(throttles, 2, "the 500 is not a throttle");
        let script = Script::new(Vec::new());
        assert_eq!(
            guard.call_counting_throttles(|| script.attempt()).await,
            (Ok(()), 0)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_next_attempt_waits_for_retry_after_on_the_clock() {
        let guard = Arc::new(Guard::new(Limits::default()));
        let calls = Arc::new(AtomicU32::new(0));
        let task = {
            let (guard, calls) = (guard.clone(), calls.clone());
            tokio::spawn(async move {
                guard
                    .call(|| {
                        let n = calls.fetch_add(1, Ordering::SeqCst);
                        async move {
                            if n == 0 {
                                Err(throttled(Some(5)))
                            } else {
                                Ok(())
                            }
                        }
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(
            guard.throttled().as_deref(),
            Some("throttled by the API server (429), retrying after 5s")
        );
        tokio::time::advance(Duration::from_millis(4900)).await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "retried before Retry-After"
        );
        tokio::time::advance(Duration::from_millis(200)).await;
        assert_eq!(task.await.unwrap(), Ok(()));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(guard.throttled(), None, "an answer clears the note");
    }

    #[tokio::test(start_paused = true)]
    async fn a_cluster_that_keeps_throttling_is_throttled_not_unreachable() {
        let guard = Guard::new(Limits::default());
        let script = Script::new((0..20).map(|_| throttled(Some(4))).collect());
        let started = Instant::now();
        let result = guard.call(|| script.attempt()).await;
        let Err(ApiError::Throttled { message, .. }) = &result else {
            panic!("{result:?}");
        };
        assert!(
            message.starts_with("throttled by the API server (429)"),
            "{message}"
        );
        assert!(message.contains("retry budget 30s"), "{message}");
        assert!(started.elapsed() <= Duration::from_secs(30));
        // Waits of 4 s: attempts at 0, 4, … 28; the next would end past the budget.
        assert_eq!(script.starts().len(), 8);
        assert!(result.as_ref().unwrap_err().is_cluster_fatal());
        assert!(!matches!(result, Err(ApiError::Unreachable(_))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_longer_than_the_budget_left_ends_at_once() {
        let guard = Guard::new(Limits::default());
        let script = Script::new(vec![throttled(Some(120))]);
        let started = Instant::now();
        let result = guard.call(|| script.attempt()).await;
        assert_eq!(started.elapsed(), Duration::ZERO);
        let Err(ApiError::Throttled {
            message,
            retry_after,
        }) = result
        else {
            panic!("{result:?}");
        };
        assert_eq!(retry_after, Some(Duration::from_secs(120)));
        assert!(
            message.contains("the server asked to wait 120s"),
            "{message}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_ends_retries_with_a_clear_error() {
        let limits = Limits {
            retries: 1000,
            ..Limits::default()
        };
        let guard = Guard::new(limits);
        let script = Script::new((0..1000).map(|_| unavailable()).collect());
        let started = Instant::now();
        let result = guard.call(|| script.attempt()).await;
        assert!(started.elapsed() <= limits.retry_budget);
        let Err(ApiError::Other(message)) = &result else {
            panic!("{result:?}");
        };
        assert!(
            message.starts_with("500 etcdserver: leader changed; gave up after "),
            "{message}"
        );
        assert!(message.contains("(retry budget 30s)"), "{message}");
        // Backoff doubles (with jitter) up to 5 s: a handful of attempts, not a thousand.
        let attempts = script.starts().len();
        assert!((6..=20).contains(&attempts), "{attempts}");
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_grows_with_jitter_between_retries() {
        let guard = Guard::new(Limits::default());
        let script = Script::new((0..4).map(|_| unavailable()).collect());
        assert_eq!(guard.call(|| script.attempt()).await, Ok(()));
        let starts = script.starts();
        let gaps: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        for (gap, base) in gaps.iter().zip([200u64, 400, 800, 1600]) {
            let base = Duration::from_millis(base);
            assert!(*gap >= base && *gap <= base * 2, "{gaps:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_non_retryable_answer_is_not_retried() {
        let guard = Guard::new(Limits::default());
        for answer in [
            ApiError::Forbidden("no".into()),
            ApiError::NotFound("namespace shop".into()),
            ApiError::Other("501 not implemented".into()),
        ] {
            let script = Script::new(vec![answer.clone()]);
            assert_eq!(guard.call(|| script.attempt()).await, Err(answer));
            assert_eq!(script.starts().len(), 1);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn each_attempt_has_its_own_timeout_within_the_budget() {
        let limits = Limits::default();
        let guard = Guard::new(limits);
        // The first attempt never answers, the second answers after 9 s: each attempt gets
        // the full 10 s, although the first already spent 10 s of the budget.
        let calls = AtomicU32::new(0);
        let starts = Mutex::new(Vec::new());
        let result = guard
            .call(|| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                starts.lock().unwrap().push(Instant::now());
                async move {
                    let answer_after = if n == 0 { 3600 } else { 9 };
                    tokio::time::sleep(Duration::from_secs(answer_after)).await;
                    Ok(())
                }
            })
            .await;
        assert_eq!(result, Ok(()));
        let starts = starts.into_inner().unwrap();
        let first = starts[1] - starts[0];
        assert!(first >= limits.request_timeout, "{first:?}");
        assert!(first < limits.request_timeout * 2, "{first:?}");

        // A cluster that never answers: timeouts of 10 s each, until the 30 s budget ends,
        // then it is unreachable.
        let begun = Instant::now();
        let calls = AtomicU32::new(0);
        let silent: Result<(), ApiError> = guard
            .call(|| {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(())
                }
            })
            .await;
        let Err(ApiError::Unreachable(message)) = &silent else {
            panic!("{silent:?}");
        };
        // The third attempt had only what was left of the budget (under 10 s).
        assert!(message.starts_with("no answer within "), "{message}");
        assert!(!message.starts_with("no answer within 10s"), "{message}");
        assert!(
            message.contains("; gave up after 3 attempts in 30s"),
            "{message}"
        );
        assert!(
            message.ends_with("(an attempt got no answer and may still have been carried out)"),
            "{message}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert!(begun.elapsed() <= limits.retry_budget);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_after_a_dropped_attempt_says_the_write_may_have_landed() {
        let guard = Guard::new(Limits::default());
        let dropped = ApiError::Retryable {
            status: None,
            message: "connection closed before message completed".into(),
            retry_after: None,
        };
        let script = Script::new(vec![
            dropped,
            ApiError::Unreachable("Connection refused".into()),
        ]);
        let result = guard.call(|| script.attempt()).await;
        assert_eq!(
            result,
            Err(ApiError::Unreachable(
                "Connection refused (an attempt got no answer and may still have been carried out)"
                    .into()
            ))
        );
        let refused = Script::new(vec![ApiError::Unreachable("Connection refused".into())]);
        assert_eq!(
            guard.call(|| refused.attempt()).await,
            Err(ApiError::Unreachable("Connection refused".into())),
            "a refusal alone sent nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_attempt_is_cut_to_the_budget_left() {
        let limits = Limits {
            request_timeout: Duration::from_secs(10),
            retry_budget: Duration::from_secs(15),
            ..Limits::default()
        };
        let guard = Guard::new(limits);
        let begun = Instant::now();
        let silent: Result<(), ApiError> = guard
            .call(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(())
            })
            .await;
        assert!(
            matches!(silent, Err(ApiError::Unreachable(_))),
            "{silent:?}"
        );
        assert!(
            begun.elapsed() <= Duration::from_secs(15),
            "{:?}",
            begun.elapsed()
        );
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777); // 06 Nov 1994 08:49:37
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", std::time::UNIX_EPOCH),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Tue, 29 Feb 2028 12:00:00 GMT", std::time::UNIX_EPOCH),
            Some(Duration::from_secs(1_835_438_400))
        );
        for bad in [
            "",
            "soon",
            "-5",
            "1.5",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
    }
}
