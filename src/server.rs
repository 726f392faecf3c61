//! Wiring: the services `serve` runs, built once from the settings, and the server that
//! runs them until shutdown. Every adapter gets the one `app::Chat`; their routes are
//! merged first and the layers (request ids and metrics, body limit) go around all of
//! them, so every route of every adapter is observed the same way.

use crate::advisor::Advisor;
use crate::app::reload::Reloader;
use crate::app::{Chat, Limits, Live, Metrics, Misses, Readiness};
use crate::config::{ServerLimits, Settings};
use crate::http::body::Deadline;
use crate::http::observe::{observe, Observer};
use crate::http::{self, Api, MAX_BODY_BYTES};
use crate::store::{MemoryStore, Observed, RedisStore, Store};
use crate::{discord, telegram, wecom};
use axum::extract::ConnectInfo;
use axum::http::{header, StatusCode};
use axum::{middleware, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// At most this many conversations are kept in memory; the idlest go first.
pub const MAX_CONVERSATIONS: usize = 100_000;
/// How long shutdown waits for the Telegram poller after the HTTP server has drained.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(9);
/// How often the store is pinged for `gpu_advisor_store_up`.
pub const STORE_PING: Duration = Duration::from_secs(5);
/// Outgoing HTTP calls (the WeCom robot) give up after this long.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything `serve` runs, built from the settings.
pub struct Services {
    pub settings: Arc<Settings>,
    /// The store with its health (the chat layer holds the same one).
    pub store: Arc<Observed>,
    /// The one chat layer every channel goes through.
    pub chat: Chat,
    /// The WeCom callback, when WeCom is configured.
    pub wecom: Option<Arc<wecom::callback::Callback>>,
    /// What `/readyz` waits for.
    pub readiness: Arc<Readiness>,
}

impl Services {
    /// The store (Redis when `REDIS_URL` is set, else memory) with its health in the
    /// metrics, the swappable advisor, the misses log, the limits, the WeCom crypto.
    pub fn build(advisor: Advisor, settings: Settings) -> Result<Services, String> {
        let metrics = Arc::new(Metrics::new());
        let backend: Arc<dyn Store> = match &settings.redis_url {
            Some(url) => Arc::new(RedisStore::new(url).map_err(|e| format!("REDIS_URL: {e}"))?),
            None => Arc::new(MemoryStore::new(MAX_CONVERSATIONS)),
        };
        let store = Arc::new(Observed::new(backend, Arc::clone(&metrics.store)));
        let chat = Chat::new(
            Arc::new(Live::new(advisor)),
            Arc::clone(&store) as Arc<dyn Store>,
            metrics,
            Arc::new(Misses::new(settings.unanswered_log.as_deref())),
            Limits {
                ask_per_min: settings.ask_rate_per_min,
                ..Limits::default()
            },
        );
        let wecom = match &settings.wecom {
            Some(w) => {
                let crypto = wecom::WecomCrypto::new(
                    w.token.expose(),
                    w.encoding_aes_key.expose(),
                    &w.corp_id,
                )
                .map_err(|e| format!("WECOM_ENCODING_AES_KEY: {e}"))?;
                let client = reqwest::Client::builder()
                    .timeout(CLIENT_TIMEOUT)
                    .build()
                    .map_err(|e| format!("HTTP client: {e}"))?;
                Some(Arc::new(wecom::callback::Callback {
                    crypto,
                    chat: chat.clone(),
                    passive_max_bytes: settings.wecom_passive_max_bytes,
                    robot_url: settings.wecom_robot_webhook_url.clone(),
                    robot: wecom::robot::Robot::new(client),
                    console_url: settings.console_url.clone(),
                }))
            }
            None => None,
        };
        Ok(Services {
            settings: Arc::new(settings),
            store,
            chat,
            wecom,
            readiness: Arc::default(),
        })
    }

    /// The HTTP adapter's routes and WeCom's (when configured), without the layers.
    pub fn routes(&self) -> Router {
        let api = Arc::new(Api {
            chat: self.chat.clone(),
            settings: Arc::clone(&self.settings),
            readiness: Arc::clone(&self.readiness),
        });
        let mut router = http::routes(api);
        if let Some(cb) = &self.wecom {
            router = router.merge(wecom::callback::routes(Arc::clone(cb)));
        }
        router
    }

    /// `routes` merged with `more` (the chat adapters' webhooks), with the layers around
    /// every route: request ids, request metrics, the body limit, the JSON 404.
    pub fn router(&self, more: Vec<Router>) -> Router {
        let mut router = self.routes();
        for r in more {
            router = router.merge(r);
        }
        let observer = Observer::new(Arc::clone(&self.chat.metrics));
        router
            .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
            .route_layer(middleware::from_fn_with_state(observer, observe))
            .fallback(http::not_found)
    }
}

/// Serves `router` on `listener` with the default limits until `shutdown` resolves,
/// then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, router, &ServerLimits::default(), shutdown).await
}

/// Serves `router` on `listener` within `limits`: at most `max_connections` open (more
/// wait in the backlog), headers within `max_header_bytes` (431 beyond) and within
/// `header_timeout` (which also closes an idle keep-alive connection), bodies within
/// `body_timeout` (each body wrapped in a [`Deadline`]). hyper's HTTP/1 connection builder is used
/// directly because `axum::serve` exposes none of these. On `shutdown`: no new
/// connections, each open one finishes its request in hand and closes.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: &ServerLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut conn = hyper::server::conn::http1::Builder::new();
    conn.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_header_bytes);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let body_timeout = limits.body_timeout;
        let svc =
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                let mut router = router.clone();
                // The body with its deadline, in the one box a body takes anyway.
                let req = req.map(|b| axum::body::Body::new(Deadline::new(b, body_timeout)));
                async move { tower_service::Service::call(&mut router, req).await }
            });
        let connection = conn.serve_connection(TokioIo::new(stream), svc);
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let stopped = tokio::select! {
                r = connection.as_mut() => Some(r),
                _ = stop.wait_for(|s| *s) => None,
            };
            let result = match stopped {
                Some(r) => r,
                None => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection has ended when every permit is back.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
    Ok(())
}

/// Where the data files live, for reloads.
pub struct DataDirs {
    pub catalog: PathBuf,
    pub intents: PathBuf,
}

/// Runs every service until ctrl-c or SIGTERM: the reloader, the chat adapters with
/// credentials, the HTTP server. After the signal no new connections are taken,
/// in-flight requests finish, and the Telegram poller finishes the update in hand and
/// saves its offset, all within [`SHUTDOWN_GRACE`] (inside Kubernetes' and systemd's
/// default stop timeouts).
pub async fn run(
    listener: tokio::net::TcpListener,
    services: Services,
    dirs: DataDirs,
) -> std::io::Result<()> {
    let settings = Arc::clone(&services.settings);
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "HTTP server and console listening");
    if settings.ask_is_open() {
        tracing::warn!(
            "/v1/ask has no credentials configured: it answers callers on 127.0.0.1 only"
        );
    }
    tracing::info!(
        wecom = settings.wecom.is_some(),
        telegram = settings.telegram.is_some(),
        discord = settings.discord.is_some(),
        robot = settings.wecom_robot_webhook_url.is_some(),
        "adapters"
    );
    let poll = Duration::from_secs(settings.reload_poll_secs);
    tracing::info!(
        catalog = %dirs.catalog.display(),
        intents = %dirs.intents.display(),
        poll_secs = poll.as_secs(),
        "data reload on SIGHUP and file change"
    );
    let reloader = Reloader {
        catalog_dir: dirs.catalog,
        intents_dir: dirs.intents,
        live: Arc::clone(&services.chat.advisor),
        metrics: Arc::clone(&services.chat.metrics),
    };
    // One shutdown signal, watched by every part that must stop cleanly.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    tokio::spawn(reloader.run(poll, stopped()));
    let store = Arc::clone(&services.store);
    let stop = stopped();
    tokio::spawn(async move { store.watch_health(STORE_PING, stop).await });
    // Adapters with credentials: their webhook routes join the HTTP server.
    let mut more = Vec::new();
    let mut polling = None;
    if let Some(tg) = &settings.telegram {
        let ready = services.readiness.part("telegram");
        match telegram::start(&services.chat, tg, ready, stopped()).await {
            Ok(telegram::Started::Webhook(r)) => more.push(r),
            Ok(telegram::Started::Polling(task)) => polling = Some(task),
            Err(e) => tracing::error!(error = %e, "telegram adapter not started"),
        }
    }
    if let Some(d) = &settings.discord {
        match discord::start(&services.chat, d, &settings.console_url, stopped()).await {
            Ok(Some(r)) => more.push(r),
            Ok(None) => {}
            Err(e) => return Err(std::io::Error::other(e)),
        }
    }
    let server = serve_with(listener, services.router(more), &settings.server, stopped());
    let signalled = stopped();
    let deadline = async move {
        signalled.await;
        tokio::time::Instant::now() + SHUTDOWN_GRACE
    };
    tokio::pin!(server, deadline);
    let (served, until) = tokio::select! {
        r = &mut server => (r, tokio::time::Instant::now() + Duration::from_secs(1)),
        until = &mut deadline => {
            match tokio::time::timeout_at(until, &mut server).await {
                Ok(r) => (r, until),
                Err(_) => {
                    tracing::warn!("requests still running at the shutdown deadline; closing");
                    (Ok(()), until)
                }
            }
        }
    };
    if let Some(task) = polling {
        if tokio::time::timeout_at(until, task).await.is_err() {
            tracing::warn!("telegram polling did not stop in time");
        }
    }
    served
}

/// Resolves on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
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
        let router = rt.block_on(async {
            Services::build(crate::data::embedded(), settings).map(|s| s.router(Vec::new()))
        })?;
        Ok(InProcess { rt, router })
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
