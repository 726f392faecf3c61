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

mod entities;
pub mod offline;

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

/// `text` contains `@name` as a whole user name (case-insensitive).
fn contains_mention(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    let at = format!("@{}", name.to_lowercase());
    let mut from = 0;
    while let Some(i) = text[from..].find(&at) {
        let end = from + i + at.len();
        let next = text[end..].chars().next();
        if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return true;
        }
        from = end;
    }
    false
}

/// A message as the app layer sees it, or None for what is not a question (no text or
/// caption, service messages, other bots).
pub fn message_inbound(msg: &Message, bot_username: &str, bot_id: UserId) -> Option<Inbound> {
    let (text, entities) = match (msg.text(), msg.caption()) {
        (Some(t), _) => (t, entity_texts(t, msg.entities().unwrap_or_default())),
        (None, Some(c)) => (
            c,
            entity_texts(c, msg.caption_entities().unwrap_or_default()),
        ),
        (None, None) => return None,
    };
    if text.trim().is_empty() {
        return None;
    }
    // An anonymous group admin writes as the group (`from` is a service bot then).
    let user = match (&msg.sender_chat, &msg.from) {
        (Some(c), _) => c.id.0.to_string(),
        (None, Some(u)) if !u.is_bot => u.id.0.to_string(),
        _ => return None,
    };
    let at = format!("@{bot_username}");
    let mentions_bot = contains_mention(text, bot_username)
        || entities.iter().any(|(kind, covered)| match kind {
            MessageEntityKind::Mention => {
                !bot_username.is_empty() && covered.eq_ignore_ascii_case(&at)
            }
            MessageEntityKind::TextMention { user } => user.id == bot_id,
            _ => false,
        });
    let replies_to_bot = msg
        .reply_to_message()
        .and_then(|r| r.from.as_ref())
        .is_some_and(|u| u.id == bot_id);
    Some(Inbound {
        channel: Channel::Telegram,
        chat: msg.chat.id.0.to_string(),
        user,
        // The dedupe identity is (chat, message id): unique per chat, and the same for
        // every delivery of the message (a re-sent update gets a new update id).
        message_id: msg.id.0.to_string(),
        text: text.to_string(),
        group: msg.chat.is_group() || msg.chat.is_supergroup(),
        mentions_bot,
        replies_to_bot,
        // An anonymous admin (writing as the group itself) is an admin; others are
        // checked with getChatMember when they send `/auto`.
        admin: msg
            .sender_chat
            .as_ref()
            .is_some_and(|c| c.id == msg.chat.id),
        command: None,
    })
}

/// A new message in an update as an `Inbound` (edits, channel posts and the rest: None).
pub fn inbound(update: &Update, bot_username: &str, bot_id: UserId) -> Option<Inbound> {
    match &update.kind {
        UpdateKind::Message(msg) => message_inbound(msg, bot_username, bot_id),
        _ => None,
    }
}

/// Worth a typing indicator: a message the app layer will most likely answer.
fn likely_answered(m: &Inbound) -> bool {
    !m.group || m.mentions_bot || m.replies_to_bot || m.text.trim_start().starts_with('/')
}

/// Whether a Bot API call may be made again after a failure that may have reached
/// Telegram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Reads and settings (`getMe`, `getUpdates`, `setWebhook`, …): the same call twice
    /// does no harm, so any transient failure is tried again.
    Idempotent,
    /// `sendMessage`: tried again only when the first try surely did not get through
    /// (flood control, a connection never made). A timeout, a 5xx or an answer that is
    /// not JSON may follow a delivered message: trying again would send it twice.
    Delivery,
}

/// Worth trying again: flood control, and for idempotent calls network errors and
/// server errors (Telegram's 5xx bodies, or a proxy's non-JSON error page).
fn retry_delay(e: &RequestError, backoff: Duration, retry: Retry) -> Option<Duration> {
    match (e, retry) {
        (RequestError::RetryAfter(s), _) => Some(s.duration().max(Duration::from_millis(100))),
        (RequestError::Network(n), Retry::Delivery) => n.is_connect().then_some(backoff),
        (RequestError::Api(ApiError::Unknown(d)), Retry::Delivery) => d
            .to_ascii_lowercase()
            .contains("too many requests")
            .then_some(backoff),
        (_, Retry::Delivery) => None,
        (
            RequestError::Network(_) | RequestError::InvalidJson { .. } | RequestError::Io(_),
            Retry::Idempotent,
        ) => Some(backoff),
        (RequestError::Api(ApiError::Unknown(d)), Retry::Idempotent) => {
            let d = d.to_ascii_lowercase();
            let server = [
                "internal server error",
                "bad gateway",
                "service unavailable",
                "gateway timeout",
                "too many requests",
            ];
            server.iter().any(|s| d.contains(s)).then_some(backoff)
        }
        _ => None,
    }
}

/// Runs a Bot API call, trying again on `RetryAfter` (after the time Telegram asks for)
/// and, as `retry` allows, on network and server errors (after 0.5 s, 1 s, 2 s, 4 s), at
/// most `MAX_TRIES` times in all.
pub async fn send_with_retry<T, F, Fut>(
    what: &str,
    retry: Retry,
    mut call: F,
) -> Result<T, RequestError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
{
    let mut backoff = FIRST_BACKOFF;
    let mut tries = 0;
    loop {
        tries += 1;
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) => match retry_delay(&e, backoff, retry) {
                Some(wait) if tries < MAX_TRIES => {
                    tracing::warn!(method = what, error = %e, try_ = tries, wait_ms = wait.as_millis() as u64, "telegram call failed; trying again");
                    tokio::time::sleep(wait).await;
                    if !matches!(e, RequestError::RetryAfter(_)) {
                        backoff *= 2;
                    }
                }
                _ => {
                    tracing::warn!(method = what, error = %e, tries, "telegram call failed; giving up");
                    return Err(e);
                }
            },
        }
    }
}

/// Telegram HTML back to plain text (tags out, entities decoded), for a part Telegram
/// could not parse.
fn html_to_plain(html: &str) -> String {
    let mut o = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => o.push(c),
            _ => {}
        }
    }
    o.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Sends `parts` (Telegram HTML) to the chat of `msg`, the first as a reply to it.
async fn send_parts(bot: &Bot, msg: &Message, parts: Vec<String>) -> Result<(), RequestError> {
    let chat_id = msg.chat.id;
    let thread = msg.thread_id.filter(|_| msg.is_topic_message);
    for (i, part) in parts.into_iter().enumerate() {
        let reply_to = (i == 0).then(|| ReplyParameters::new(msg.id).allow_sending_without_reply());
        let request = |text: String, html: bool| {
            let mut r = bot.send_message(chat_id, text);
            if html {
                r = r.parse_mode(ParseMode::Html);
            }
            if let Some(p) = &reply_to {
                r = r.reply_parameters(p.clone());
            }
            if let Some(t) = thread {
                r = r.message_thread_id(t);
            }
            r
        };
        let sent = send_with_retry("sendMessage", Retry::Delivery, || {
            request(part.clone(), true).send()
        });
        match sent.await {
            Ok(_) => {}
            Err(RequestError::Api(ApiError::CantParseEntities(e))) => {
                tracing::warn!(error = %e, "telegram refused our HTML; sending plain text");
                let plain = html_to_plain(&part);
                send_with_retry("sendMessage", Retry::Delivery, || {
                    request(plain.clone(), false).send()
                })
                .await?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Handles one update: the app layer decides, the reply goes back as HTML in parts of at
/// most 4096 characters, the first one replying to the question.
pub async fn answer(bot: &Bot, chat: &Chat, update: Update) -> Result<(), RequestError> {
    answer_as(bot, chat, bot_id_from_token(bot.token()), update).await
}

/// `answer` with the bot's user id from `getMe`.
pub async fn answer_as(
    bot: &Bot,
    chat: &Chat,
    bot_id: UserId,
    update: Update,
) -> Result<(), RequestError> {
    let UpdateKind::Message(msg) = &update.kind else {
        return Ok(());
    };
    let Some(mut m) = message_inbound(msg, &chat.bot_name, bot_id) else {
        return Ok(());
    };
    let auto = matches!(
        command::parse(&m.text, &chat.bot_name),
        Parsed::Command(Command::Auto(_))
    );
    if m.group && !m.admin && auto {
        m.admin = is_chat_admin(bot, msg).await;
    }
    if likely_answered(&m) {
        // Best effort and in the background: the indicator must not delay the answer.
        let typing = bot.send_chat_action(msg.chat.id, ChatAction::Typing).send();
        tokio::spawn(async move {
            if let Err(e) = typing.await {
                tracing::debug!(error = %e, "sendChatAction failed");
            }
        });
    }
    let parts = match chat.handle(&m).await {
        Outcome::Answer(a) => render::split_message(
            &render::telegram_html(&a.answer.rendered),
            render::TELEGRAM_MAX_CHARS,
        ),
        Outcome::Notice(text) => {
            render::split_message(&render::escape_html(&text), render::TELEGRAM_MAX_CHARS)
        }
        Outcome::Silent(why) => {
            tracing::debug!(?why, chat = %m.chat, "telegram message not answered");
            return Ok(());
        }
        Outcome::Limited { .. } => return Ok(()),
    };
    send_parts(bot, msg, parts).await
}

/// `getChatMember`: is the sender an administrator or the owner of this chat? An API
/// failure counts as no (the setting stays as it is, the sender can try again).
async fn is_chat_admin(bot: &Bot, msg: &Message) -> bool {
    let Some(user) = msg.from.as_ref() else {
        return false;
    };
    match bot.get_chat_member(msg.chat.id, user.id).send().await {
        Ok(member) => member.is_privileged(),
        Err(e) => {
            tracing::warn!(error = %e, "telegram getChatMember failed; /auto refused");
            false
        }
    }
}

/// The command menu: (command, English description, Chinese description).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("start", "What I can answer", "开始：我能回答什么"),
    ("help", "How to ask", "使用说明"),
    (
        "gpu",
        "<question> Ask about a workload, e.g. /gpu can a 4090 run 70B",
        "<问题> 问需求，如 /gpu 4090 能跑 70B 吗",
    ),
    ("price", "[card] Rental prices", "[卡型] 租用价格"),
    ("cards", "The cards we rent", "可租的显卡"),
    (
        "faq",
        "[topic] Frequently asked questions",
        "[主题] 常见问题",
    ),
    (
        "compare",
        "<a> <b> Compare two cards",
        "<卡A> <卡B> 对比两张卡",
    ),
    (
        "budget",
        "<amount> What a monthly budget rents",
        "<金额> 每月预算能租什么",
    ),
    (
        "auto",
        "on|off Answer clear GPU questions here without a mention (admins)",
        "on|off 本群明确的 GPU 问题无需 @ 也回答（管理员）",
    ),
];

/// `setMyCommands`: English as the default, Chinese for `zh` clients (one try each).
pub async fn register_commands(bot: &Bot) -> Result<(), RequestError> {
    let en: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, en, _)| BotCommand::new(*c, *en))
        .collect();
    let zh: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, _, zh)| BotCommand::new(*c, *zh))
        .collect();
    bot.set_my_commands(en).send().await?;
    bot.set_my_commands(zh).language_code("zh").send().await?;
    Ok(())
}

/// `getMe`: the bot's user name (lowercase) and id (one try).
pub async fn get_me(bot: &Bot) -> Result<Me, RequestError> {
    let me = bot.get_me().send().await?;
    Ok((me.username().to_lowercase(), me.user.id))
}

/// `setWebhook` (one try) with the secret Telegram sends back in
/// `X-Telegram-Bot-Api-Secret-Token`.
pub async fn set_webhook(
    bot: &Bot,
    url: &reqwest::Url,
    secret: &config::Secret,
) -> Result<(), RequestError> {
    bot.set_webhook(url.clone())
        .allowed_updates(vec![AllowedUpdate::Message])
        .secret_token(secret.expose())
        .send()
        .await
        .map(|_| ())
}

/// A shutdown future that can be asked "has it fired?" more than once.
struct Shutdown<F> {
    fut: Pin<Box<F>>,
    fired: bool,
}

impl<F: Future<Output = ()>> Shutdown<F> {
    fn new(fut: F) -> Self {
        Shutdown {
            fut: Box::pin(fut),
            fired: false,
        }
    }

    async fn fired(&mut self) -> bool {
        if !self.fired {
            let fut = &mut self.fut;
            self.fired =
                std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_ready())).await;
        }
        self.fired
    }

    /// `f`, unless shutdown comes first (then None).
    async fn race<T>(&mut self, f: impl Future<Output = T>) -> Option<T> {
        if self.fired {
            return None;
        }
        tokio::select! {
            _ = self.fut.as_mut() => {
                self.fired = true;
                None
            }
            v = f => Some(v),
        }
    }
}

/// Until it works or shutdown: a start-up call, with growing pauses between tries
/// (0.5 s doubling up to 30 s, or as long as flood control asks).
async fn until_ok<T, F, Fut, S>(what: &str, stop: &mut Shutdown<S>, mut call: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
    S: Future<Output = ()>,
{
    let mut wait = FIRST_SETUP_WAIT;
    loop {
        match stop.race(call()).await? {
            Ok(v) => return Some(v),
            Err(e) => {
                let pause = match &e {
                    RequestError::RetryAfter(s) => s.duration().max(wait),
                    _ => wait,
                };
                tracing::error!(method = what, error = %e, wait_ms = pause.as_millis() as u64, "telegram start-up call failed; trying again");
                stop.race(tokio::time::sleep(pause)).await?;
                wait = (wait * 2).min(MAX_POLL_BACKOFF);
            }
        }
    }
}

/// Answers one update in a task of its own, so that a panic while handling it (a
/// malformed update tripping a library) is caught: logged, counted in
/// `gpu_advisor_updates_dropped_total{channel="telegram"}` and skipped. The caller goes
/// on with the next update either way.
async fn answer_guarded(bot: &Bot, chat: &Chat, bot_id: UserId, update: Update) {
    let id = update.id.0;
    let (b, c) = (bot.clone(), chat.clone());
    guarded(
        chat,
        id,
        async move { answer_as(&b, &c, bot_id, update).await },
    )
    .await;
}

/// Runs `handling` (update `id`) in its own task; see [`answer_guarded`].
async fn guarded<F>(chat: &Chat, id: u32, handling: F)
where
    F: Future<Output = Result<(), RequestError>> + Send + 'static,
{
    match tokio::spawn(handling).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, update = id, "telegram reply not delivered"),
        Err(e) if e.is_panic() => {
            tracing::error!(
                update = id,
                "telegram update handling panicked; update skipped"
            );
            chat.metrics.update_dropped(Channel::Telegram);
        }
        Err(e) => tracing::warn!(error = %e, update = id, "telegram update handling cancelled"),
    }
}

/// The offset persisted by an earlier run, if any.
async fn stored_offset(chat: &Chat) -> Option<i32> {
    match chat.store.setting(OFFSET_KEY).await {
        Ok(v) => v.and_then(|s| s.trim().parse().ok()),
        Err(e) => {
            tracing::warn!(error = %e, "store unavailable: starting Telegram polling without a saved offset");
            None
        }
    }
}

/// The polling loop proper: `getUpdates` from the saved offset, every update handled in
/// order, the offset saved after each; stops at shutdown after the update in hand.
async fn poll_loop<S: Future<Output = ()>>(chat: &Chat, bot: Bot, me: Me, stop: &mut Shutdown<S>) {
    let chat = chat.named(&me.0);
    if until_ok("deleteWebhook", stop, || bot.delete_webhook().send())
        .await
        .is_none()
    {
        return;
    }
    let mut offset = stored_offset(&chat).await;
    tracing::info!(bot = %me.0, ?offset, "telegram long polling started");
    let mut wait = FIRST_BACKOFF;
    loop {
        let mut req = bot
            .get_updates()
            .timeout(POLL_TIMEOUT_SECS)
            .allowed_updates(vec![AllowedUpdate::Message]);
        if let Some(o) = offset {
            req = req.offset(o);
        }
        let Some(res) = stop.race(req.send()).await else {
            break;
        };
        let updates = match res {
            Ok(u) => {
                wait = FIRST_BACKOFF;
                u
            }
            Err(e) => {
                let pause = match &e {
                    RequestError::RetryAfter(s) => s.duration(),
                    _ => wait,
                };
                tracing::warn!(error = %e, wait_ms = pause.as_millis() as u64, "telegram getUpdates failed");
                if stop.race(tokio::time::sleep(pause)).await.is_none() {
                    break;
                }
                wait = (wait * 2).min(MAX_POLL_BACKOFF);
                continue;
            }
        };
        for update in updates {
            let next = update.id.as_offset();
            if offset.is_some_and(|o| next <= o) {
                continue; // already handled (a server that ignored the offset)
            }
            answer_guarded(&bot, &chat, me.1, update).await;
            offset = Some(next);
            if let Err(e) = chat.store.set_setting(OFFSET_KEY, &next.to_string()).await {
                tracing::warn!(error = %e, "store unavailable: Telegram offset not saved");
            }
            if stop.fired().await {
                break;
            }
        }
        if stop.fired().await {
            break;
        }
    }
    tracing::info!("telegram long polling stopped");
}

/// `setMyCommands` until it works, except that an error Telegram will give again (the
/// menu refused) is logged and passed over: the bot works without a menu.
async fn commands_or_give_up(bot: &Bot) -> Result<(), RequestError> {
    match register_commands(bot).await {
        Err(e) if retry_delay(&e, Duration::ZERO, Retry::Idempotent).is_none() => {
            tracing::warn!(error = %e, "cannot register the Telegram commands");
            Ok(())
        }
        r => r,
    }
}

/// Long polling until `shutdown`: builds the bot from the settings, `getMe` (then
/// `ready` is set), `setMyCommands`, `deleteWebhook`, then `getUpdates` in a loop (see
/// `poll_loop`). Start-up calls are tried until they work or shutdown.
pub async fn run_polling(
    chat: Chat,
    tg: config::Telegram,
    ready: Ready,
    shutdown: impl Future<Output = ()>,
) {
    let bot = match bot(&tg) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "telegram polling not started");
            return;
        }
    };
    let mut stop = Shutdown::new(shutdown);
    let Some(me) = until_ok("getMe", &mut stop, || get_me(&bot)).await else {
        return;
    };
    ready.set();
    if until_ok("setMyCommands", &mut stop, || commands_or_give_up(&bot))
        .await
        .is_none()
    {
        return;
    }
    poll_loop(&chat, bot, me, &mut stop).await;
}

/// The webhook's state: the secret always; the bot's identity once the start-up calls
/// have worked (until then deliveries get 503 and Telegram delivers them again later).
#[derive(Clone)]
struct Hook {
    secret: config::Secret,
    bot: Bot,
    up: Arc<OnceLock<(Chat, UserId)>>,
}

fn secret_matches(expected: &str, got: Option<&[u8]>) -> bool {
    use subtle::ConstantTimeEq;
    match got {
        Some(g) => bool::from(expected.as_bytes().ct_eq(g)),
        None => false,
    }
}

async fn webhook(AxState(h): AxState<Hook>, headers: HeaderMap, body: Bytes) -> StatusCode {
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
fn webhook_routes(secret: config::Secret, bot: Bot, up: Arc<OnceLock<(Chat, UserId)>>) -> Router {
    Router::new()
        .route(WEBHOOK_PATH, post(webhook))
        .with_state(Hook { secret, bot, up })
}

/// Webhook mode's start-up calls, each until it works or shutdown: `getMe`,
/// `setMyCommands`, `setWebhook`; then the webhook takes updates and `ready` is set.
async fn set_up_webhook(
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
