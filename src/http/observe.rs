//! The layer around every route of every adapter: a request id (kept from
//! `X-Request-Id` when sent), a span and a log line per request, and
//! `gpu_advisor_http_requests_total` by matched route and status.

use crate::app::Metrics;
use axum::extract::{MatchedPath, Request, State as AxState};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// The layer's state: the metrics and the request-id counter.
pub struct Observer {
    metrics: Arc<Metrics>,
    started: Instant,
    request_ids: AtomicU64,
}

impl Observer {
    pub fn new(metrics: Arc<Metrics>) -> Arc<Observer> {
        Arc::new(Observer {
            metrics,
            started: Instant::now(),
            request_ids: AtomicU64::new(0),
        })
    }
}

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Gives every request an id (kept from `X-Request-Id` when sent), logs it, counts it.
pub async fn observe(AxState(o): AxState<Arc<Observer>>, req: Request, next: Next) -> Response {
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let route = matched.as_ref().map_or("unmatched", MatchedPath::as_str);
    let id = header_str(req.headers(), "x-request-id")
        .filter(|v| v.len() <= 64)
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "{:x}-{}",
                o.started.elapsed().as_nanos() as u64,
                o.request_ids.fetch_add(1, Ordering::Relaxed)
            )
        });
    let method = req.method().clone();
    let t0 = Instant::now();
    let span = tracing::info_span!("request", request_id = %id, %method, route = %route);
    let mut resp = next.run(req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    o.metrics.http(route, status);
    span.in_scope(|| tracing::info!(status, micros = t0.elapsed().as_micros() as u64, "handled"));
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}
