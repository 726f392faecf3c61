//! Webhook mode: `POST /telegram/webhook`, mounted at once, 503 until the start-up calls
//! have worked, the secret checked in constant time, updates answered in tasks.

use super::*;

/// The webhook's state: the secret always; the bot's identity once the start-up calls
/// have worked (until then deliveries get 503 and Telegram delivers them again later).
#[derive(Clone)]
pub(super) struct Hook {
    secret: config::Secret,
    bot: Bot,
    up: Arc<OnceLock<(Chat, UserId)>>,
}

pub(super) fn secret_matches(expected: &str, got: Option<&[u8]>) -> bool {
    use subtle::ConstantTimeEq;
    match got {
        Some(g) => bool::from(expected.as_bytes().ct_eq(g)),
        None => false,
    }
}

pub(super) async fn webhook(
    AxState(h): AxState<Hook>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let got = headers.get(SECRET_HEADER).map(|v| v.as_bytes());
    if !secret_matches(h.secret.expose(), got) {
        return StatusCode::UNAUTHORIZED;
    }
    let Some((chat, bot_id)) = h.up.get().cloned() else {
        return StatusCode::SERVICE_UNAVAILABLE;
    };
    let update: Update = match serde_json::from_slice(&body) {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(error = %e, "telegram webhook: malformed update");
            return StatusCode::BAD_REQUEST;
        }
    };
    tokio::spawn(async move { answer_guarded(&h.bot, &chat, bot_id, update).await });
    StatusCode::OK
}

/// `POST /telegram/webhook`: the secret header checked in constant time (401), 503 until
/// `up` holds the bot's identity, the update parsed (400), acknowledged with 200 at once
/// and answered in a task.
pub(super) fn webhook_routes(
    secret: config::Secret,
    bot: Bot,
    up: Arc<OnceLock<(Chat, UserId)>>,
) -> Router {
    Router::new()
        .route(WEBHOOK_PATH, post(webhook))
        .with_state(Hook { secret, bot, up })
}

/// Webhook mode's start-up calls, each until it works or shutdown: `getMe`,
/// `setMyCommands`, `setWebhook`; then the webhook takes updates and `ready` is set.
pub(super) async fn set_up_webhook(
    chat: Chat,
    bot: Bot,
    url: reqwest::Url,
    secret: config::Secret,
    up: Arc<OnceLock<(Chat, UserId)>>,
    ready: Ready,
    shutdown: impl Future<Output = ()>,
) {
    let mut stop = Shutdown::new(shutdown);
    let Some(me) = until_ok("getMe", &mut stop, || get_me(&bot)).await else {
        return;
    };
    if until_ok("setMyCommands", &mut stop, || commands_or_give_up(&bot))
        .await
        .is_none()
    {
        return;
    }
    let set = until_ok("setWebhook", &mut stop, || set_webhook(&bot, &url, &secret)).await;
    if set.is_none() {
        return;
    }
    tracing::info!(bot = %me.0, "telegram webhook set");
    let _ = up.set((chat.named(&me.0), me.1));
    ready.set();
}
