//! The Telegram adapter (teloxide's Bot API client): updates become `Inbound`s for the
//! neutral `app::Chat`, outcomes become HTML replies. Two ways in:
//!
//! - long polling (`run_polling`, the default): `getUpdates` with the offset persisted in
//!   the store under `telegram:offset` after every handled update, so a restart neither
//!   answers an update twice nor loses one;
//! - a webhook (`webhook_routes`, when `TELEGRAM_WEBHOOK_URL` is set): `POST
//!   /telegram/webhook`, checked against `TELEGRAM_WEBHOOK_SECRET` (required), acknowledged
//!   at once and handled in a task.
//!
//! Duplicate deliveries (a webhook retry, an update served again) are caught by the app
//! layer's dedupe on (platform, chat id, message id): a message id is unique in its chat.
//! Replies go through `send_with_retry` (flood control and transient failures; a message
//! is sent again only when the first try surely did not get through); start-up calls
//! (`getMe`, `setMyCommands`, `setWebhook`) are tried until they work or shutdown, and
//! until then the adapter's `Ready` is not set (`/readyz` answers 503) and the webhook
//! answers 503.
//! Each update is handled in its own task: one that panics is logged, counted in
//! `gpu_advisor_updates_dropped_total` and skipped, and polling goes on past it.
//! It must not decide whether or what to answer: that is `app::Chat`'s.

mod answer;
mod entities;
mod inbound;
pub mod offline;
mod polling;
mod send;
mod setup;
mod webhook;

pub use answer::*;
pub use inbound::*;
pub use polling::*;
pub use send::*;
pub use setup::*;
use webhook::*;

pub use entities::entity_texts;

use crate::app::{command, Channel, Chat, Command, Inbound, Outcome, Parsed, Ready};
use crate::config;
use crate::render;
use axum::body::Bytes;
use axum::extract::State as AxState;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;
use teloxide::payloads::setters::*;
use teloxide::requests::{Request, Requester};
use teloxide::types::{
    AllowedUpdate, BotCommand, ChatAction, Message, MessageEntityKind, ParseMode, ReplyParameters,
    Update, UpdateKind, UserId,
};
use teloxide::{ApiError, Bot, RequestError};

/// Seconds a `getUpdates` call waits for an update.
pub const POLL_TIMEOUT_SECS: u32 = 25;
/// The store key of the next update id to fetch.
pub const OFFSET_KEY: &str = "telegram:offset";
/// The webhook's path.
pub const WEBHOOK_PATH: &str = "/telegram/webhook";
/// The header Telegram puts the webhook secret in.
pub const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";
/// Tries of one Bot API call before giving up.
pub const MAX_TRIES: u32 = 5;
/// The first pause between tries of a start-up call (then doubled, up to 30 s).
const FIRST_SETUP_WAIT: Duration = Duration::from_millis(500);
/// The first back-off after a network or server error (then doubled).
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Longest wait between `getUpdates` retries.
const MAX_POLL_BACKOFF: Duration = Duration::from_secs(30);

/// The bot's identity from `getMe`: user name (lowercase, no `@`) and user id.
pub type Me = (String, UserId);

/// A `Bot` for these settings: the token, the API URL when set (tests point it at a
/// local fake), and an HTTP client whose timeout outlasts a long poll.
pub fn bot(tg: &config::Telegram) -> Result<Bot, String> {
    let client = teloxide::net::default_reqwest_settings()
        .timeout(Duration::from_secs(u64::from(POLL_TIMEOUT_SECS) + 15))
        .build()
        .map_err(|e| format!("Telegram HTTP client: {e}"))?;
    let bot = Bot::with_client(tg.token.expose(), client);
    match &tg.api_url {
        Some(url) => {
            let url = reqwest::Url::parse(url.trim_end_matches('/'))
                .map_err(|e| format!("TELOXIDE_API_URL: {e}"))?;
            if url.cannot_be_a_base() {
                return Err("TELOXIDE_API_URL: not a base URL".into());
            }
            Ok(bot.set_api_url(url))
        }
        None => Ok(bot),
    }
}

/// The bot's user id as its token says (`<id>:<secret>`), 0 when it does not.
pub fn bot_id_from_token(token: &str) -> UserId {
    UserId(
        token
            .split(':')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
    )
}

/// How the adapter runs once started.
pub enum Started {
    /// Webhook mode: the router to merge into the HTTP server (mounted at once; 503
    /// until the start-up calls have worked).
    Webhook(Router),
    /// Long polling in a task; it ends after shutdown with the offset saved.
    Polling(tokio::task::JoinHandle<()>),
}

/// Starts the adapter for `serve`; `ready` is set once the Bot API has answered.
/// Webhook mode (needs `TELEGRAM_WEBHOOK_SECRET`): the router is returned at once and a
/// task makes the start-up calls, trying each until it works (a Telegram outage at
/// start-up delays the bot, it does not stop it). Long polling: a task that does the
/// same, then polls until `shutdown`.
pub async fn start(
    chat: &Chat,
    tg: &config::Telegram,
    ready: Ready,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Started, String> {
    let tg = tg.clone();
    let bot = bot(&tg)?;
    match &tg.webhook_url {
        Some(url) => {
            let url = reqwest::Url::parse(url).map_err(|e| format!("TELEGRAM_WEBHOOK_URL: {e}"))?;
            let secret = tg.webhook_secret.clone().ok_or(
                "TELEGRAM_WEBHOOK_URL needs TELEGRAM_WEBHOOK_SECRET: webhook mode not started",
            )?;
            let up = Arc::new(OnceLock::new());
            tokio::spawn(set_up_webhook(
                chat.clone(),
                bot.clone(),
                url,
                secret.clone(),
                Arc::clone(&up),
                ready,
                shutdown,
            ));
            Ok(Started::Webhook(webhook_routes(secret, bot, up)))
        }
        None => Ok(Started::Polling(tokio::spawn(run_polling(
            chat.clone(),
            tg,
            ready,
            shutdown,
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_whole_names() {
        assert!(contains_mention(
            "@GPU_Advisor_Bot 4090?",
            "gpu_advisor_bot"
        ));
        assert!(contains_mention(
            "hi @gpu_advisor_bot, 4090?",
            "gpu_advisor_bot"
        ));
        assert!(!contains_mention(
            "@gpu_advisor_bot2 4090?",
            "gpu_advisor_bot"
        ));
        assert!(!contains_mention("4090?", "gpu_advisor_bot"));
        assert!(!contains_mention("@ 4090?", ""));
    }

    #[test]
    fn token_gives_the_bot_id() {
        assert_eq!(bot_id_from_token("123:TEST"), UserId(123));
        assert_eq!(bot_id_from_token("junk"), UserId(0));
    }

    #[test]
    fn plain_fallback() {
        assert_eq!(
            html_to_plain("<b>A &lt;b&gt;</b> &amp;amp; x"),
            "A <b> &amp; x"
        );
    }

    #[test]
    fn retries_only_what_may_pass() {
        let b = Duration::from_secs(1);
        let flood = RequestError::RetryAfter(teloxide::types::Seconds::from_seconds(3));
        let server = RequestError::Api(ApiError::Unknown("Internal Server Error".into()));
        let garbled = RequestError::InvalidJson {
            source: serde_json::from_str::<u8>("{").unwrap_err().into(),
            raw: "{\"ok\":tr".into(),
        };
        for retry in [Retry::Idempotent, Retry::Delivery] {
            assert_eq!(retry_delay(&flood, b, retry), Some(Duration::from_secs(3)));
            let not_found = RequestError::Api(ApiError::ChatNotFound);
            assert_eq!(retry_delay(&not_found, b, retry), None);
        }
        assert_eq!(retry_delay(&server, b, Retry::Idempotent), Some(b));
        assert_eq!(retry_delay(&garbled, b, Retry::Idempotent), Some(b));
        // A message may have been delivered before these: never sent twice.
        assert_eq!(retry_delay(&server, b, Retry::Delivery), None);
        assert_eq!(retry_delay(&garbled, b, Retry::Delivery), None);
    }

    #[tokio::test]
    async fn a_panicking_update_is_counted_and_skipped() {
        let chat = crate::server::Services::build(
            crate::data::embedded(),
            crate::config::Settings::default(),
        )
        .expect("services")
        .chat;
        guarded(&chat, 1, async { Ok(()) }).await;
        guarded(&chat, 2, async { panic!("a poison update") }).await;
        guarded(&chat, 3, async { Ok(()) }).await;
        let text = chat.metrics.render();
        assert!(
            text.contains("gpu_advisor_updates_dropped_total{channel=\"telegram\"} 1\n"),
            "{text}"
        );
    }
}
