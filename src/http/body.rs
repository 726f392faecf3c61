//! Request bodies with a deadline: the body must arrive within the body timeout of the
//! first moment the server waits for it. A body already in the connection's buffer
//! never starts a timer, so requests that arrive whole (nearly all) pay nothing.
//! What a route makes of a failed body read is [`failure`]'s: 408, 413 or 400.

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The body did not arrive within the body timeout.
#[derive(Debug)]
pub struct BodyTimeout;

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the body did not arrive in time")
    }
}

impl std::error::Error for BodyTimeout {}

/// `inner` with a deadline, started the first time it is not ready.
pub struct Deadline<B> {
    inner: B,
    timeout: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<B> Deadline<B> {
    pub fn new(inner: B, timeout: Duration) -> Deadline<B> {
        Deadline {
            inner,
            timeout,
            sleep: None,
        }
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                let timeout = this.timeout;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout)))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why reading a body failed, as a status, an error code and a message: too slow (408),
/// too large (413), or broken — shorter than announced, or cut off (400).
pub fn failure(e: &axum::Error) -> (axum::http::StatusCode, &'static str, &'static str) {
    use axum::http::StatusCode;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<BodyTimeout>() {
            return (
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                "the body did not arrive in time",
            );
        }
        if s.is::<http_body_util::LengthLimitError>() {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the body is over 64 KiB",
            );
        }
        source = s.source();
    }
    (
        StatusCode::BAD_REQUEST,
        "bad_body",
        "the body could not be read (shorter than announced, or cut off)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// A body whose data never comes.
    struct Stalled;

    impl Body for Stalled {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_stalled_body_fails_at_the_deadline_and_a_whole_one_never_waits() {
        let t0 = std::time::Instant::now();
        let e = Deadline::new(Stalled, Duration::from_millis(50))
            .collect()
            .await
            .map(|_| ())
            .expect_err("a stalled body fails");
        assert!(e.is::<BodyTimeout>(), "{e}");
        assert!(t0.elapsed() >= Duration::from_millis(50));
        let whole = http_body_util::Full::new(Bytes::from_static(b"{\"text\":\"hi\"}"));
        let mut d = Deadline::new(whole, Duration::from_millis(50));
        let frame = d.frame().await.expect("a frame").expect("data");
        assert_eq!(
            frame.into_data().ok(),
            Some(Bytes::from_static(b"{\"text\":\"hi\"}"))
        );
        assert!(d.sleep.is_none(), "a body that was ready started no timer");
    }

    #[tokio::test]
    async fn failures_map_to_their_status() {
        let status = |e: axum::Error| failure(&e).0.as_u16();
        assert_eq!(status(axum::Error::new(BodyTimeout)), 408);
        let big = axum::body::Body::from(vec![b'x'; 100]);
        let e = axum::body::to_bytes(big, 10)
            .await
            .expect_err("over the limit");
        assert_eq!(status(e), 413);
        assert_eq!(status(axum::Error::new("connection reset")), 400);
    }
}
