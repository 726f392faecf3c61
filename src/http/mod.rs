//! The HTTP server `serve` starts (CONTRACT.md §4): health, metrics, the support-ticket
//! webhook `/v1/ask`, WeCom's callback, the console and its catalog, the OpenAPI
//! document. Thin: requests become calls of the core through `App`.

pub mod auth;
pub mod wecom;

pub use crate::metrics;

use crate::advisor::{Advisor, Intent};
use crate::app::{Chat, Limits};
use crate::config::Settings;
use crate::live::{Answered, Live};
use crate::ratelimit::Buckets;
use crate::redis_store::RedisStore;
use crate::store::{MemoryStore, Observed, Store};
use axum::extract::{ConnectInfo, MatchedPath, Request, State as AxState};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tracing::Instrument;

/// Request bodies over this size get 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
pub use crate::app::CONVERSATION_TTL;
/// At most this many conversations are kept in memory; the idlest go first.
pub const MAX_CONVERSATIONS: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Http,
    Wecom,
}

impl Channel {
    fn id(self) -> &'static str {
        match self {
            Channel::Http => "http",
            Channel::Wecom => "wecom",
        }
    }
}

/// Shared state of the server.
pub struct App {
    /// The advisor in use; replaced by a reload.
    pub advisor: Arc<Live>,
    pub settings: Settings,
    pub metrics: Arc<metrics::Metrics>,
    pub store: Arc<dyn Store>,
    /// The neutral chat layer the Telegram and Discord adapters call.
    pub chat: Arc<Chat>,
    pub wecom: Option<crate::wecom::WecomCrypto>,
    ask_limits: Option<Mutex<Buckets>>,
    robot_limit: Arc<tokio::sync::Mutex<Buckets>>,
    client: reqwest::Client,
    started: Instant,
    request_ids: AtomicU64,
}

impl App {
    pub fn new(advisor: Advisor, settings: Settings) -> Result<Arc<App>, String> {
        let wecom = match &settings.wecom {
            Some(w) => Some(
                crate::wecom::WecomCrypto::new(
                    w.token.expose(),
                    w.encoding_aes_key.expose(),
                    &w.corp_id,
                )
                .map_err(|e| format!("WECOM_ENCODING_AES_KEY: {e}"))?,
            ),
            None => None,
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        let store: Arc<dyn Store> = match &settings.redis_url {
            Some(url) => Arc::new(RedisStore::new(url).map_err(|e| format!("REDIS_URL: {e}"))?),
            None => Arc::new(MemoryStore::new(MAX_CONVERSATIONS)),
        };
        let advisor = Arc::new(Live::new(advisor));
        let metrics = Arc::new(metrics::Metrics::new());
        let store: Arc<dyn Store> = Arc::new(Observed::new(store, Arc::clone(&metrics)));
        let chat = Arc::new(Chat {
            advisor: Arc::clone(&advisor),
            store: Arc::clone(&store),
            metrics: Arc::clone(&metrics),
            limits: Limits::default(),
            bot_name: String::new(),
        });
        Ok(Arc::new(App {
            advisor,
            metrics,
            store,
            chat,
            wecom,
            ask_limits: settings
                .ask_rate_per_min
                .map(|n| Mutex::new(Buckets::new(n as f64, n as f64, 100_000))),
            robot_limit: Arc::new(tokio::sync::Mutex::new(Buckets::new(
                wecom::ROBOT_PER_MIN,
                wecom::ROBOT_PER_MIN,
                1_000,
            ))),
            client,
            started: Instant::now(),
            request_ids: AtomicU64::new(0),
            settings,
        }))
    }

    /// Answers `text` in conversation `id` (a fresh one when None); the state lives in
    /// the store, so any replica continues the conversation.
    pub async fn ask(&self, channel: Channel, text: &str, id: Option<&str>) -> Arc<Answered> {
        let t0 = Instant::now();
        // Conversation ids are cut to 128 characters.
        let key = id.map(|id| {
            let end = id.char_indices().nth(128).map_or(id.len(), |(i, _)| i);
            format!("{}:{}", channel.id(), &id[..end])
        });
        let mut state = None;
        if let Some(k) = &key {
            match self.store.load(k).await {
                Ok(s) => state = s,
                Err(e) => {
                    tracing::warn!(error = %e, "store unavailable: answering without conversation context")
                }
            }
        }
        let answered = self.advisor.answered(text, &state.unwrap_or_default());
        let answer = &answered.answer;
        if let Some(k) = key {
            if let Err(e) = self
                .store
                .save_encoded(&k, answered.state_json(), CONVERSATION_TTL)
                .await
            {
                tracing::warn!(error = %e, "store unavailable: conversation state not saved");
            }
        }
        self.metrics
            .question(channel.id(), answer.intent.id(), t0.elapsed().as_secs_f64());
        if answer.intent == Intent::Unknown {
            let q: String = text.chars().take(300).collect();
            tracing::info!(channel = channel.id(), question = %q, "unanswered question");
            if let Some(path) = &self.settings.unanswered_log {
                let line = serde_json::json!({"channel": channel.id(), "question": q}).to_string();
                append_line(path, &line);
            }
        }
        answered
    }

    /// Sends `parts` through the WeCom group robot in the background, within its rate.
    pub fn push_robot(self: &Arc<Self>, url: String, parts: Vec<String>) {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            for part in parts {
                loop {
                    let wait = app
                        .robot_limit
                        .lock()
                        .await
                        .take(&url, app.started.elapsed().as_secs_f64());
                    match wait {
                        Ok(()) => break,
                        Err(secs) => {
                            tokio::time::sleep(Duration::from_secs_f64(secs.min(60.0))).await
                        }
                    }
                }
                let body =
                    serde_json::json!({"msgtype": "markdown", "markdown": {"content": part}});
                match app.client.post(&url).json(&body).send().await {
                    Ok(r) if r.status().is_success() => {}
                    Ok(r) => tracing::warn!(status = %r.status(), "wecom robot push refused"),
                    Err(e) => tracing::warn!(error = %e, "wecom robot push failed"),
                }
            }
        });
    }
}

fn append_line(path: &str, line: &str) {
    use std::io::Write;
    let res = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = res {
        tracing::warn!(error = %e, path, "cannot append to the unanswered log");
    }
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
    /// A valid bearer token (the whole header value).
    Token(&'a str),
    /// A valid HMAC signature from this address.
    Signed(std::net::IpAddr),
}

impl Caller<'_> {
    /// The rate-limit bucket; only built when limits are on.
    fn key(&self) -> String {
        match self {
            Caller::Local(ip) => ip.to_string(),
            Caller::Token(t) => format!("token:{t}"),
            Caller::Signed(ip) => format!("hmac:{ip}"),
        }
    }
}

/// Who may call `/v1/ask`: any configured credential, or with none configured only
/// callers on the loopback interface.
fn authorize<'a>(
    app: &App,
    peer: SocketAddr,
    h: &'a HeaderMap,
    body: &[u8],
) -> Result<Caller<'a>, &'static str> {
    let s = &app.settings;
    if s.ask_is_open() {
        return if peer.ip().is_loopback() {
            Ok(Caller::Local(peer.ip()))
        } else {
            Err("no credentials configured: open to 127.0.0.1 only")
        };
    }
    let mut last = auth::AuthError::Missing;
    if !s.api_tokens.is_empty() {
        match auth::bearer(header_str(h, "authorization"), &s.api_tokens) {
            Ok(()) => return Ok(Caller::Token(header_str(h, "authorization").unwrap_or(""))),
            Err(e) => last = e,
        }
    }
    if !s.webhook_secrets.is_empty() {
        let sig = header_str(h, "x-signature-256");
        let ts = header_str(h, "x-timestamp");
        match auth::signature(sig, ts, body, &s.webhook_secrets, unix_now()) {
            Ok(()) => return Ok(Caller::Signed(peer.ip())),
            Err(e) if e != auth::AuthError::Missing || last == auth::AuthError::Missing => last = e,
            Err(_) => {}
        }
    }
    Err(last.message())
}

async fn ask(
    AxState(app): AxState<Arc<App>>,
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
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the body is over 64 KiB",
            )
        }
    };
    let client = match authorize(&app, peer, &parts.headers, &body) {
        Ok(c) => c,
        Err(why) => return error(StatusCode::UNAUTHORIZED, "unauthorized", why),
    };
    if let Some(limits) = &app.ask_limits {
        let wait = limits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(&client.key(), app.started.elapsed().as_secs_f64());
        if let Err(secs) = wait {
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "too many requests",
            );
            let v =
                HeaderValue::from_str(&format!("{}", secs.ceil().max(1.0) as u64)).expect("digits");
            r.headers_mut().insert(header::RETRY_AFTER, v);
            return r;
        }
    }
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
    let answered = app
        .ask(Channel::Http, &req.text, req.conversation.as_deref())
        .await;
    (
        [(header::CONTENT_TYPE, "application/json")],
        answered.json(),
    )
        .into_response()
}

async fn catalog(AxState(app): AxState<Arc<App>>) -> Response {
    let advisor = app.advisor.get();
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

async fn metrics_text(AxState(app): AxState<Arc<App>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render() + &app.advisor.render_metrics(),
    )
        .into_response()
}

/// Gives every request an id (kept from `X-Request-Id` when sent), logs it, counts it.
async fn observe(AxState(app): AxState<Arc<App>>, req: Request, next: Next) -> Response {
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let route = matched.as_ref().map_or("unmatched", MatchedPath::as_str);
    let id = header_str(req.headers(), "x-request-id")
        .filter(|v| v.len() <= 64)
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "{:x}-{}",
                app.started.elapsed().as_nanos() as u64,
                app.request_ids.fetch_add(1, Ordering::Relaxed)
            )
        });
    let method = req.method().clone();
    let t0 = Instant::now();
    let span = tracing::info_span!("request", request_id = %id, %method, route = %route);
    let mut resp = next.run(req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    app.metrics.http(route, status);
    span.in_scope(|| tracing::info!(status, micros = t0.elapsed().as_micros() as u64, "handled"));
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

/// The router run in process on its own single-threaded runtime: a request goes through
/// every layer (request ids, metrics, auth, limits) without a socket, from a peer on
/// 127.0.0.1. For the proptests and the fuzz targets, which send many thousands.
pub struct InProcess {
    rt: tokio::runtime::Runtime,
    router: Router,
}

impl InProcess {
    /// The router on the embedded data with `settings`.
    pub fn new(settings: Settings) -> Result<InProcess, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("runtime: {e}"))?;
        let app = rt.block_on(async { App::new(crate::data::embedded(), settings) })?;
        Ok(InProcess {
            rt,
            router: router(app),
        })
    }

    /// POSTs `body` to `path` (a path such as "/v1/ask") as JSON: the status and the
    /// response body.
    pub fn post_json(&self, path: &str, body: Vec<u8>) -> (StatusCode, axum::body::Bytes) {
        let req = axum::http::Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(body));
        let mut req = match req {
            Ok(r) => r,
            Err(e) => return (StatusCode::BAD_REQUEST, e.to_string().into()),
        };
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
        self.rt.block_on(async {
            let mut router = self.router.clone();
            let res = match tower_service::Service::call(&mut router, req).await {
                Ok(r) => r,
                Err(never) => match never {},
            };
            let status = res.status();
            let body = axum::body::to_bytes(res.into_body(), usize::MAX)
                .await
                .unwrap_or_default();
            (status, body)
        })
    }
}

const CONSOLE: &str = include_str!("console.html");
pub const OPENAPI: &str = include_str!("openapi.json");

/// The router with every route of CONTRACT.md §4 that this build serves.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(|| async { Html(CONSOLE) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/metrics", get(metrics_text))
        .route(
            "/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], OPENAPI) }),
        )
        .route("/v1/ask", post(ask))
        .route("/v1/catalog", get(catalog))
        .route("/wecom/callback", get(wecom::verify).post(wecom::message))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&app), observe))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .with_state(app)
}

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_router(listener, router(app), shutdown).await
}

/// Serves `router` (the app's routes merged with adapters' routes).
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let svc = router.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, svc)
        .with_graceful_shutdown(shutdown)
        .await
}
