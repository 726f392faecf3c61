//! The Telegram adapter (teloxide's Bot API client): updates become `Inbound`s for the
//! neutral `app::Chat`, outcomes become HTML replies. Two ways in:
//!
//! - long polling (`run_polling`, the default): `getUpdates` with the offset persisted in
//!   the store under `telegram:offset` after every handled update, so a restart neither
//!   answers an update twice nor loses one;
//! - a webhook (`webhook_routes`, when `TELEGRAM_WEBHOOK_URL` is set): `POST
//!   /telegram/webhook`, checked against `TELEGRAM_WEBHOOK_SECRET`, acknowledged at once and
//!   handled in a task.
//!
//! Duplicate deliveries (a webhook retry, an update served again) are caught by the app
//! layer's dedupe on (platform, chat id, message id): a message id is unique in its chat.
//! Every call to the Bot API goes through `send_with_retry` (flood control and transient
//! failures). It must not decide whether or what to answer: that is `app::Chat`'s.

use crate::app::{command, Channel, Chat, Command, Inbound, Outcome, Parsed};
use crate::config;
use crate::render;
use axum::body::Bytes;
use axum::extract::State as AxState;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
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
        (Some(t), _) => (t, msg.parse_entities().unwrap_or_default()),
        (None, Some(c)) => (c, msg.parse_caption_entities().unwrap_or_default()),
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
        || entities.iter().any(|e| match e.kind() {
            MessageEntityKind::Mention => {
                !bot_username.is_empty() && e.text().eq_ignore_ascii_case(&at)
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

/// Worth trying again: flood control, network errors, server errors (Telegram's 5xx
/// bodies, or a proxy's non-JSON error page).
fn retry_delay(e: &RequestError, backoff: Duration) -> Option<Duration> {
    match e {
        RequestError::RetryAfter(s) => Some(s.duration().max(Duration::from_millis(100))),
        RequestError::Network(_) | RequestError::InvalidJson { .. } | RequestError::Io(_) => {
            Some(backoff)
        }
        RequestError::Api(ApiError::Unknown(d)) => {
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
/// and on network and server errors (after 0.5 s, 1 s, 2 s, 4 s), at most `MAX_TRIES`
/// times in all.
pub async fn send_with_retry<T, F, Fut>(what: &str, mut call: F) -> Result<T, RequestError>
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
            Err(e) => match retry_delay(&e, backoff) {
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
        match send_with_retry("sendMessage", || request(part.clone(), true).send()).await {
            Ok(_) => {}
            Err(RequestError::Api(ApiError::CantParseEntities(e))) => {
                tracing::warn!(error = %e, "telegram refused our HTML; sending plain text");
                let plain = html_to_plain(&part);
                send_with_retry("sendMessage", || request(plain.clone(), false).send()).await?;
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

/// `setMyCommands`: English as the default, Chinese for `zh` clients. Failures are
/// logged: the bot works without a menu.
pub async fn register_commands(bot: &Bot) {
    let en: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, en, _)| BotCommand::new(*c, *en))
        .collect();
    let zh: Vec<BotCommand> = COMMANDS
        .iter()
        .map(|(c, _, zh)| BotCommand::new(*c, *zh))
        .collect();
    if let Err(e) =
        send_with_retry("setMyCommands", || bot.set_my_commands(en.clone()).send()).await
    {
        tracing::warn!(error = %e, "cannot register the Telegram commands");
    }
    if let Err(e) = send_with_retry("setMyCommands", || {
        bot.set_my_commands(zh.clone()).language_code("zh").send()
    })
    .await
    {
        tracing::warn!(error = %e, "cannot register the Telegram commands (zh)");
    }
}

/// `getMe`: the bot's user name (lowercase) and id.
pub async fn get_me(bot: &Bot) -> Result<Me, RequestError> {
    let me = send_with_retry("getMe", || bot.get_me().send()).await?;
    Ok((me.username().to_lowercase(), me.user.id))
}

/// `setWebhook` with the secret Telegram will send back in `X-Telegram-Bot-Api-Secret-Token`.
pub async fn set_webhook(bot: &Bot, url: &str, secret: Option<&str>) -> Result<(), String> {
    let url = reqwest::Url::parse(url).map_err(|e| format!("TELEGRAM_WEBHOOK_URL: {e}"))?;
    send_with_retry("setWebhook", || {
        let mut r = bot
            .set_webhook(url.clone())
            .allowed_updates(vec![AllowedUpdate::Message]);
        if let Some(s) = secret {
            r = r.secret_token(s);
        }
        r.send()
    })
    .await
    .map(|_| ())
    .map_err(|e| format!("Telegram setWebhook: {e}"))
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

/// Until it works or shutdown: a setup call, with growing pauses between tries.
async fn until_ok<T, F, Fut, S>(what: &str, stop: &mut Shutdown<S>, mut call: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
    S: Future<Output = ()>,
{
    let mut wait = Duration::from_secs(1);
    loop {
        match stop.race(call()).await? {
            Ok(v) => return Some(v),
            Err(e) => {
                tracing::error!(method = what, error = %e, wait_s = wait.as_secs(), "telegram start-up call failed; trying again");
                stop.race(tokio::time::sleep(wait)).await?;
                wait = (wait * 2).min(MAX_POLL_BACKOFF);
            }
        }
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
            let id = update.id.0;
            if let Err(e) = answer_as(&bot, &chat, me.1, update).await {
                tracing::warn!(error = %e, update = id, "telegram reply not delivered");
            }
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

/// Long polling until `shutdown`: builds the bot from the settings, `deleteWebhook`,
/// `getMe`, `setMyCommands`, then `getUpdates` in a loop (see `poll_loop`).
pub async fn run_polling(chat: Chat, tg: config::Telegram, shutdown: impl Future<Output = ()>) {
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
    if stop.race(register_commands(&bot)).await.is_none() {
        return;
    }
    poll_loop(&chat, bot, me, &mut stop).await;
}

#[derive(Clone)]
struct Hook {
    secret: Option<config::Secret>,
    bot: Bot,
    chat: Arc<Chat>,
    bot_id: UserId,
}

fn secret_matches(expected: &str, got: Option<&[u8]>) -> bool {
    use subtle::ConstantTimeEq;
    match got {
        Some(g) => bool::from(expected.as_bytes().ct_eq(g)),
        None => false,
    }
}

async fn webhook(AxState(h): AxState<Hook>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if let Some(s) = &h.secret {
        let got = headers.get(SECRET_HEADER).map(|v| v.as_bytes());
        if !secret_matches(s.expose(), got) {
            return StatusCode::UNAUTHORIZED;
        }
    }
    let update: Update = match serde_json::from_slice(&body) {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(error = %e, "telegram webhook: malformed update");
            return StatusCode::BAD_REQUEST;
        }
    };
    tokio::spawn(async move {
        let id = update.id.0;
        if let Err(e) = answer_as(&h.bot, &h.chat, h.bot_id, update).await {
            tracing::warn!(error = %e, update = id, "telegram reply not delivered");
        }
    });
    StatusCode::OK
}

/// `POST /telegram/webhook`: the secret header checked in constant time (401), the
/// update parsed (400), acknowledged with 200 at once and answered in a task.
pub fn webhook_routes(chat: &Chat, secret: Option<config::Secret>, bot: Bot, me: Me) -> Router {
    if secret.is_none() {
        tracing::warn!("TELEGRAM_WEBHOOK_SECRET is not set: {WEBHOOK_PATH} accepts any caller");
    }
    let hook = Hook {
        secret,
        bot,
        chat: Arc::new(chat.named(&me.0)),
        bot_id: me.1,
    };
    Router::new()
        .route(WEBHOOK_PATH, post(webhook))
        .with_state(hook)
}

/// How the adapter runs once started.
pub enum Started {
    /// Webhook mode: the router to merge into the HTTP server.
    Webhook(Router),
    /// Long polling in a task; it ends after shutdown with the offset saved.
    Polling(tokio::task::JoinHandle<()>),
}

/// Starts the adapter for `serve`. Webhook mode: `getMe`, the command menu and
/// `setWebhook` now (the router is returned). Long polling: a task that retries `getMe`
/// until the Bot API answers (a Telegram outage at start-up delays the bot, it does not
/// stop it), then polls until `shutdown`.
pub async fn start(
    chat: &Chat,
    tg: &config::Telegram,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Started, String> {
    let tg = tg.clone();
    let bot = bot(&tg)?;
    match &tg.webhook_url {
        Some(url) => {
            let me = get_me(&bot)
                .await
                .map_err(|e| format!("Telegram getMe: {e}"))?;
            register_commands(&bot).await;
            set_webhook(&bot, url, tg.webhook_secret.as_ref().map(|s| s.expose())).await?;
            tracing::info!(bot = %me.0, "telegram webhook set");
            Ok(Started::Webhook(webhook_routes(
                chat,
                tg.webhook_secret.clone(),
                bot,
                me,
            )))
        }
        None => Ok(Started::Polling(tokio::spawn(run_polling(
            chat.clone(),
            tg,
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
        assert_eq!(
            retry_delay(
                &RequestError::RetryAfter(teloxide::types::Seconds::from_seconds(3)),
                b
            ),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_delay(
                &RequestError::Api(ApiError::Unknown("Internal Server Error".into())),
                b
            ),
            Some(b)
        );
        assert_eq!(
            retry_delay(&RequestError::Api(ApiError::ChatNotFound), b),
            None
        );
    }
}
