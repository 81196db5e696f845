//! How flotilla's kube clients are built for its one retry layer: kube-rs's own retries off
//! (they would wait, unseen, inside flotilla's per-attempt timeout), and a middleware that
//! keeps the `Retry-After` header of a 429 or 503 answer, which kube-rs drops when it turns
//! the answer into an error. Such an answer reaches [`map_error`](super::api::map_error) as a
//! [`RetryAfter`]; the retrying itself is `fanout::cluster_api::Guard`'s. It must not retry,
//! nor change any other answer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use http::{Request, Response, StatusCode, header::RETRY_AFTER};
use http_body_util::BodyExt;
use kube::client::{Body, ClientBuilder, DynBody};
use kube::{Client, Config};
use tower::{BoxError, Layer, Service};

use super::proxy::NameProxy;
use crate::backend::fanout::cluster_api::{parse_retry_after, throttled_note};

/// A client for `config` with kube-rs's retries off and `Retry-After` kept; with `proxy`, a
/// failed connection names the proxy it went through.
pub fn client(mut config: Config, proxy: Option<NameProxy>) -> Result<Client, kube::Error> {
    config.default_retry = false;
    let builder = ClientBuilder::try_from(config)?;
    Ok(match proxy {
        Some(proxy) => builder
            .with_layer(&proxy)
            .with_layer(&KeepRetryAfter)
            .build(),
        None => builder.with_layer(&KeepRetryAfter).build(),
    })
}

/// A 429 or 503 answer that named a wait.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {message}")]
pub struct RetryAfter {
    pub code: u16,
    pub wait: Duration,
    /// The Status message, or the first line of a body that is not a Status.
    pub message: String,
}

/// The throttling note for an answer that was a 429 (with the wait it asked, when it named
/// one), for code that reports a cluster from a kube error without going through the guard
/// (a probe): such a cluster answered, so it is busy, not unreachable.
pub fn throttled(err: &kube::Error) -> Option<String> {
    match err {
        kube::Error::Api(status) if status.code == 429 => Some(
            match status.details.as_ref().map(|d| d.retry_after_seconds) {
                Some(secs) if secs > 0 => throttled_note(Duration::from_secs(u64::from(secs))),
                _ => "throttled by the API server (429)".to_string(),
            },
        ),
        kube::Error::Service(inner) => inner
            .downcast_ref::<RetryAfter>()
            .filter(|answer| answer.code == 429)
            .map(|answer| throttled_note(answer.wait)),
        _ => None,
    }
}

/// Turns 429 and 503 answers with a readable `Retry-After` into [`RetryAfter`] errors.
#[derive(Debug, Clone, Copy)]
pub struct KeepRetryAfter;

impl<S> Layer<S> for KeepRetryAfter {
    type Service = KeepRetryAfterService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        KeepRetryAfterService { inner }
    }
}

#[derive(Debug, Clone)]
pub struct KeepRetryAfterService<S> {
    inner: S,
}

type Answer = Response<Box<DynBody>>;

impl<S> Service<Request<Body>> for KeepRetryAfterService<S>
where
    S: Service<Request<Body>, Response = Answer>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Answer;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into)?;
            let Some(wait) = wait_asked(&answer, SystemTime::now()) else {
                return Ok(answer);
            };
            let code = answer.status().as_u16();
            let body = answer.into_body().collect().await?.to_bytes();
            Err(Box::new(RetryAfter {
                code,
                wait,
                message: message_of(&body),
            }) as BoxError)
        })
    }
}

/// The wait a 429 or 503 answer's `Retry-After` header asks for.
fn wait_asked<B>(answer: &Response<B>, now: SystemTime) -> Option<Duration> {
    if !matches!(
        answer.status(),
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
    ) {
        return None;
    }
    let value = answer.headers().get(RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, now)
}

/// A Status body's message, else the body's first line.
fn message_of(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|status| status.get("message")?.as_str().map(str::to_string))
        .unwrap_or_else(|| text.lines().next().unwrap_or("").trim().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn answer(code: u16, retry_after: Option<&str>) -> Response<()> {
        let mut builder = Response::builder().status(code);
        if let Some(value) = retry_after {
            builder = builder.header(RETRY_AFTER, value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn only_429_and_503_with_a_readable_header_are_kept() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        let secs = Some(Duration::from_secs(3));
        assert_eq!(wait_asked(&answer(429, Some("3")), now), secs);
        assert_eq!(wait_asked(&answer(503, Some("3")), now), secs);
        assert_eq!(
            wait_asked(&answer(503, Some("Sun, 06 Nov 1994 08:49:40 GMT")), now),
            secs
        );
        assert_eq!(wait_asked(&answer(500, Some("3")), now), None);
        assert_eq!(wait_asked(&answer(429, None), now), None);
        assert_eq!(wait_asked(&answer(429, Some("soon")), now), None);
    }

    #[test]
    fn the_message_is_the_status_message_or_the_first_line() {
        let status = br#"{"kind":"Status","message":"Too many requests, please try again later."}"#;
        assert_eq!(
            message_of(status),
            "Too many requests, please try again later."
        );
        assert_eq!(message_of(b"busy\nmore"), "busy");
    }

    #[test]
    fn a_429_is_named_throttled_with_its_wait() {
        let kept = kube::Error::Service(Box::new(RetryAfter {
            code: 429,
            wait: Duration::from_secs(2),
            message: "busy".into(),
        }));
        assert_eq!(
            throttled(&kept).as_deref(),
            Some("throttled by the API server (429), retrying after 2s")
        );
        let unavailable = kube::Error::Service(Box::new(RetryAfter {
            code: 503,
            wait: Duration::from_secs(2),
            message: "busy".into(),
        }));
        assert_eq!(throttled(&unavailable), None);
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "message": "busy", "code": 429,
            "details": { "retryAfterSeconds": 4 },
        }))
        .unwrap();
        assert_eq!(
            throttled(&kube::Error::Api(status.boxed())).as_deref(),
            Some("throttled by the API server (429), retrying after 4s")
        );
    }
}
