//! The HTTP adapter's own routes (CONTRACT.md §4): health, metrics, the support-ticket
//! webhook `/v1/ask`, the console and its catalog, the OpenAPI document. Routes only:
//! a question goes to `app::Chat` like every channel's; request ids, request metrics,
//! body limits and timeouts are layers `server` puts around every route of every adapter.

pub mod auth;
pub mod body;
pub mod observe;

use crate::app::{Channel, Chat, Inbound, Outcome, Readiness, Silence};
use crate::config::Settings;
use axum::extract::{ConnectInfo, Request, State as AxState};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Request bodies over this size get 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What the routes need: the chat layer, the settings (credentials), readiness.
pub struct Api {
    pub chat: Chat,
    pub settings: Arc<Settings>,
    pub readiness: Arc<Readiness>,
}

/// Borrowed from the request body where the JSON strings have no escapes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskBody<'a> {
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    conversation: Option<std::borrow::Cow<'a, str>>,
}

pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Who called `/v1/ask`, as far as rate limiting is concerned.
enum Caller<'a> {
    /// No credentials configured: a loopback peer.
    Local(std::net::IpAddr),
    /// A valid bearer token (the credentials, without the scheme).
    Token(&'a str),
    /// A valid HMAC signature from this address.
    Signed(std::net::IpAddr),
}

impl Caller<'_> {
    /// The rate-limit bucket; only built when limits are on. A token's bucket is a digest
    /// of the token itself, so every spelling of one `Authorization` header shares one
    /// bucket and a key is 38 bytes however long the header.
    fn key(&self) -> String {
        match self {
            Caller::Local(ip) => ip.to_string(),
            Caller::Token(token) => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(token.as_bytes());
                format!("token:{}", hex::encode(&digest[..16]))
            }
            Caller::Signed(ip) => format!("hmac:{ip}"),
        }
    }
}

/// Who may call `/v1/ask`: any configured credential, or with none configured only
/// callers on the loopback interface.
fn authorize<'a>(
    s: &Settings,
    peer: SocketAddr,
    h: &'a HeaderMap,
    body: &[u8],
) -> Result<Caller<'a>, &'static str> {
    if s.ask_is_open() {
        // A dual-stack listener ([::]) sees 127.0.0.1 as ::ffff:127.0.0.1.
        let ip = peer.ip().to_canonical();
        return if ip.is_loopback() {
            Ok(Caller::Local(ip))
        } else {
            Err("no credentials configured: open to 127.0.0.1 only")
        };
    }
    let mut last = auth::AuthError::Missing;
    if !s.api_tokens.is_empty() {
        match auth::bearer(header_str(h, "authorization"), &s.api_tokens) {
            Ok(()) => {
                let token = header_str(h, "authorization").and_then(auth::bearer_token);
                return Ok(Caller::Token(token.unwrap_or_default()));
            }
            Err(e) => last = e,
        }
    }
    if !s.webhook_secrets.is_empty() {
        let sig = header_str(h, "x-signature-256");
        let ts = header_str(h, "x-timestamp");
        match auth::signature(sig, ts, body, &s.webhook_secrets, unix_now()) {
            Ok(()) => return Ok(Caller::Signed(peer.ip().to_canonical())),
            Err(e) if e != auth::AuthError::Missing || last == auth::AuthError::Missing => last = e,
            Err(_) => {}
        }
    }
    Err(last.message())
}

async fn ask(
    AxState(app): AxState<Arc<Api>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    let json_type = header_str(&parts.headers, "content-type")
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Content-Type must be application/json",
        );
    }
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(e) => {
            let (status, code, message) = body::failure(&e);
            return error(status, code, message);
        }
    };
    let client = match authorize(&app.settings, peer, &parts.headers, &body) {
        Ok(c) => c,
        Err(why) => return error(StatusCode::UNAUTHORIZED, "unauthorized", why),
    };
    let req: AskBody = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            let at = format!("line {} column {}", e.line(), e.column());
            return error(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!("malformed request at {at}: {e}"),
            );
        }
    };
    let inbound = Inbound {
        channel: Channel::Http,
        chat: req.conversation.map(|c| c.into_owned()).unwrap_or_default(),
        // The key is built only when a limit is on.
        user: if app.chat.limits.ask_per_min.is_some() {
            client.key()
        } else {
            String::new()
        },
        text: req.text.into_owned(),
        // A signed request is delivered once: its signature (over timestamp and body) is
        // its delivery id, so a replay within the ±300 s window is refused.
        message_id: match client {
            Caller::Signed(_) => header_str(&parts.headers, "x-signature-256")
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        },
        ..Inbound::default()
    };
    match app.chat.handle(&inbound).await {
        Outcome::Answer(answered) => (
            [(header::CONTENT_TYPE, "application/json")],
            answered.json(),
        )
            .into_response(),
        Outcome::Limited { retry_after_secs } => {
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "too many requests",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            r
        }
        Outcome::Silent(Silence::Duplicate) => error(
            StatusCode::CONFLICT,
            "replayed",
            "this signed request was already answered",
        ),
        // The webhook has no addressing or chat notices: not reached.
        Outcome::Notice(_) | Outcome::Silent(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_answer",
            "the question got no answer",
        ),
    }
}

async fn catalog(AxState(app): AxState<Arc<Api>>) -> Response {
    let advisor = app.chat.advisor.get();
    let cat = &advisor.catalog;
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

async fn metrics_text(AxState(app): AxState<Arc<Api>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.chat.metrics.render()
            + &app.chat.advisor.render_metrics()
            + &app.chat.misses.render_metrics(),
    )
        .into_response()
}

const CONSOLE: &str = include_str!("console.html");
pub const OPENAPI: &str = include_str!("openapi.json");

/// The adapter's routes; `server` merges them with the other adapters' and adds the
/// layers.
pub fn routes(api: Arc<Api>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(CONSOLE) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route(
            "/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], OPENAPI) }),
        )
        .route("/v1/ask", axum::routing::post(ask))
        .route("/v1/catalog", get(catalog))
        .with_state(api)
}

/// `GET /readyz`: 200 `ready` once every registered part is up, else 503 naming the
/// parts still starting (a load balancer sends no traffic to this replica meanwhile).
async fn readyz(AxState(app): AxState<Arc<Api>>) -> Response {
    let pending = app.readiness.pending();
    if pending.is_empty() {
        "ready".into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("starting: {}", pending.join(", ")),
        )
            .into_response()
    }
}

/// The JSON error for a route nobody serves.
pub async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "no such route")
}
