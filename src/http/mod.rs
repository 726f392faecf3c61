//! The HTTP server `serve` starts: health, metrics, the ticket webhook `/v1/ask`, the
//! catalog for the console, and the console page itself. Thin: requests become calls
//! of the core through `App`.

use crate::advisor::{Advisor, State};
use axum::extract::{DefaultBodyLimit, State as AxState};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request bodies over this size get 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Conversations idle longer than this are forgotten.
pub const CONVERSATION_TTL: Duration = Duration::from_secs(30 * 60);
/// At most this many conversations are kept in memory; the oldest go first.
pub const MAX_CONVERSATIONS: usize = 100_000;

/// Shared state of the server.
pub struct App {
    pub advisor: Advisor,
    conversations: Mutex<HashMap<String, (State, Instant)>>,
    questions: AtomicU64,
    unanswered: AtomicU64,
}

impl App {
    pub fn new(advisor: Advisor) -> Arc<App> {
        Arc::new(App {
            advisor,
            conversations: Mutex::new(HashMap::new()),
            questions: AtomicU64::new(0),
            unanswered: AtomicU64::new(0),
        })
    }

    /// Answers `text` in conversation `id` (a fresh one when None).
    pub fn ask(&self, text: &str, id: Option<&str>) -> crate::advisor::Answer {
        let now = Instant::now();
        let state = id
            .and_then(|id| {
                let map = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
                map.get(id)
                    .filter(|(_, t)| now.duration_since(*t) < CONVERSATION_TTL)
                    .map(|(s, _)| s.clone())
            })
            .unwrap_or_default();
        let (answer, next) = self.advisor.answer(text, &state);
        self.questions.fetch_add(1, Ordering::Relaxed);
        if matches!(answer.intent, crate::advisor::Intent::Unknown) {
            self.unanswered.fetch_add(1, Ordering::Relaxed);
            tracing::info!(question = %text.chars().take(200).collect::<String>(), "unanswered question");
        }
        if let Some(id) = id {
            let mut map = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
            if map.len() >= MAX_CONVERSATIONS && !map.contains_key(id) {
                map.retain(|_, (_, t)| now.duration_since(*t) < CONVERSATION_TTL);
                if map.len() >= MAX_CONVERSATIONS {
                    if let Some(oldest) = map
                        .iter()
                        .min_by_key(|(_, (_, t))| *t)
                        .map(|(k, _)| k.clone())
                    {
                        map.remove(&oldest);
                    }
                }
            }
            map.insert(id.chars().take(128).collect(), (next, now));
        }
        answer
    }
}

#[derive(Deserialize)]
struct AskBody {
    text: String,
    #[serde(default)]
    conversation: Option<String>,
}

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

async fn ask(
    AxState(app): AxState<Arc<App>>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_type {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Content-Type must be application/json",
        );
    }
    let req: AskBody = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!("malformed JSON: {e}"),
            )
        }
    };
    let answer = app.ask(&req.text, req.conversation.as_deref());
    Json(answer).into_response()
}

async fn catalog(AxState(app): AxState<Arc<App>>) -> Response {
    let cat = &app.advisor.catalog;
    let offers: Vec<_> = cat
        .offers
        .iter()
        .map(|o| {
            let mem = o.slice_memory_gb.or_else(|| cat.gpu(&o.gpu).map(|g| g.memory_gb * o.cards_per_unit as f64));
            serde_json::json!({
                "id": o.id, "gpu": o.gpu, "name_zh": o.name_zh, "name_en": o.name_en,
                "unit": format!("{:?}", o.unit).to_lowercase(), "counts": o.counts, "price": o.price,
                "estimated": o.estimated, "annual_discount": o.annual_discount, "hourly": o.hourly,
                "inference_only": o.inference_only, "domestic": o.domestic, "memory_gb": mem,
            })
        })
        .collect();
    let gpus: Vec<_> = cat
        .gpus
        .iter()
        .map(|g| {
            serde_json::json!({
                "id": g.id, "name": g.name, "memory_gb": g.memory_gb, "memory_type": g.memory_type,
                "bandwidth_gbs": g.bandwidth_gbs, "fp16_tflops": g.fp16_tflops, "fp8_tflops": g.fp8_tflops, "link": g.link,
            })
        })
        .collect();
    Json(serde_json::json!({"offers": offers, "gpus": gpus})).into_response()
}

async fn metrics(AxState(app): AxState<Arc<App>>) -> Response {
    let body = format!(
        "# HELP gpu_advisor_questions_total Questions answered.\n# TYPE gpu_advisor_questions_total counter\ngpu_advisor_questions_total{{channel=\"http\"}} {}\n# HELP gpu_advisor_unanswered_total Questions not understood.\n# TYPE gpu_advisor_unanswered_total counter\ngpu_advisor_unanswered_total{{channel=\"http\"}} {}\n",
        app.questions.load(Ordering::Relaxed),
        app.unanswered.load(Ordering::Relaxed)
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

const CONSOLE: &str = include_str!("console.html");

/// The router with every route of CONTRACT.md §4 that this build serves.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(CONSOLE) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/metrics", get(metrics))
        .route("/v1/ask", post(ask))
        .route("/v1/catalog", get(catalog))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(app)
}

/// Serves until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await
}
