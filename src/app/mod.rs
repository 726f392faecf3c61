//! The app layer, the only way in for every channel: Telegram, Discord, WeCom and the
//! `/v1/ask` webhook each turn their payload into an [`Inbound`] and hand it to
//! [`Chat::handle`], which decides whether the message is addressed to the bot, drops
//! duplicate deliveries, applies the rate limits (with one polite notice), runs commands,
//! loads and saves the conversation in the store, answers with the core, counts it and
//! logs what it could not answer. Adapters translate payloads and render outcomes, and
//! nothing else; this layer knows no platform's wire format.

pub mod channel;
pub mod command;
pub mod live;
pub mod metrics;
pub mod misses;
pub mod ratelimit;
pub mod ready;
pub mod reload;

pub use channel::Channel;
pub use command::{Command, Parsed};
pub use live::{Answered, Live};
pub use metrics::Metrics;
pub use misses::Misses;
pub use ready::{Readiness, Ready};

use crate::advisor::Intent;
use crate::store::{Store, TtlMap};
use ratelimit::Buckets;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Conversation state lives this long after the last message.
pub const CONVERSATION_TTL: Duration = Duration::from_secs(30 * 60);
/// A delivery id is remembered this long (platform retries come within minutes).
pub const DEDUPE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Default limits: a user, a group (messages per minute).
pub const USER_PER_MIN: u64 = 10;
pub const CHAT_PER_MIN: u64 = 20;
/// A webhook conversation id (and any id in a store key) is cut to this many characters.
pub const CONVERSATION_ID_CHARS: usize = 128;
/// Deliveries remembered in process for the duplicate check during a store outage.
const LOCAL_DELIVERIES: usize = 20_000;
/// How long a delivery is remembered in process (platforms retry within minutes).
const LOCAL_DEDUPE_TTL: Duration = Duration::from_secs(15 * 60);
/// At most this many webhook clients are tracked by the rate limit at once.
const ASK_CLIENTS: usize = 100_000;

/// A platform-neutral inbound message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inbound {
    pub channel: Channel,
    /// The chat (group or private chat); for the webhook, the conversation id ("" for a
    /// one-off question).
    pub chat: String,
    /// The sender; for the webhook, the client's rate-limit key.
    pub user: String,
    /// The platform's id of this delivery (update id, message id, MsgId); "" when the
    /// channel has none (the webhook), which turns the duplicate check off.
    pub message_id: String,
    pub text: String,
    /// A command the platform already delivered typed (Discord's slash commands); text
    /// commands are parsed from `text`.
    pub command: Option<Command>,
    pub group: bool,
    pub mentions_bot: bool,
    pub replies_to_bot: bool,
    /// The platform confirmed the sender may change this chat's settings (a group admin
    /// or owner; Discord: Manage Server). Adapters check it only for `/auto`.
    pub admin: bool,
}

impl Inbound {
    /// The store key of this message's conversation; None for a one-off webhook
    /// question. In groups each user has their own conversation.
    fn conversation_key(&self) -> Option<String> {
        let channel = self.channel.id();
        if self.channel.is_chat() {
            return Some(format!(
                "{channel}:{}:{}",
                key_part(&self.chat),
                key_part(&self.user)
            ));
        }
        if self.chat.is_empty() {
            return None;
        }
        Some(format!("{channel}:{}", key_part(&self.chat)))
    }

    /// The store key of this delivery, for the duplicate check.
    fn delivery_key(&self) -> String {
        format!(
            "seen:{}:{}:{}",
            self.channel.id(),
            key_part(&self.chat),
            key_part(&self.message_id)
        )
    }
}

/// The store key of a chat's auto-answer setting.
fn auto_key(channel: Channel, chat: &str) -> String {
    format!("auto:{}:{}", channel.id(), key_part(chat))
}

/// An id as part of a store key: at most [`CONVERSATION_ID_CHARS`] characters, so no
/// client-chosen id (a webhook conversation, a long signature) makes keys large.
fn key_part(id: &str) -> &str {
    let end = id
        .char_indices()
        .nth(CONVERSATION_ID_CHARS)
        .map_or(id.len(), |(i, _)| i);
    &id[..end]
}

/// Why a message got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    NotAddressed,
    Duplicate,
    RateLimited,
}

#[derive(Debug)]
pub enum Outcome {
    /// The answer, with its state and its JSON serialised at most once.
    Answer(Arc<Answered>),
    /// A plain notice (rate limit, a setting changed), in the asker's language.
    Notice(String),
    /// The webhook's client is over its limit: retry after this many seconds.
    Limited {
        retry_after_secs: u64,
    },
    Silent(Silence),
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub user_per_min: u64,
    pub chat_per_min: u64,
    /// Requests per minute of one webhook client (`GPU_ADVISOR_ASK_RATE_PER_MIN`);
    /// None: no limit.
    pub ask_per_min: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            user_per_min: USER_PER_MIN,
            chat_per_min: CHAT_PER_MIN,
            ask_per_min: None,
        }
    }
}

/// The chat layer: the advisor, the store, the metrics, the misses log and the limits.
/// Cheap to clone (adapters keep one under the bot's own name).
#[derive(Clone)]
pub struct Chat {
    pub advisor: Arc<Live>,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<Metrics>,
    pub misses: Arc<Misses>,
    pub limits: Limits,
    /// The bot's user name (for `/cmd@name` and `@name` mentions), lowercase.
    pub bot_name: String,
    /// The webhook's per-client token buckets: in process, as `/v1/ask` answers a
    /// `Retry-After` to the second.
    ask_buckets: Option<Arc<Mutex<Buckets>>>,
    /// Deliveries this replica has seen: the duplicate check while the store is down
    /// (platform retries come within minutes, to the replica or to another).
    local_seen: Arc<TtlMap<()>>,
    started: Instant,
}

fn is_zh(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

impl Chat {
    pub fn new(
        advisor: Arc<Live>,
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        misses: Arc<Misses>,
        limits: Limits,
    ) -> Chat {
        let ask_buckets = limits.ask_per_min.map(|n| {
            let n = f64::from(n);
            Arc::new(Mutex::new(Buckets::new(n, n, ASK_CLIENTS)))
        });
        Chat {
            advisor,
            store,
            metrics,
            misses,
            limits,
            bot_name: String::new(),
            ask_buckets,
            local_seen: Arc::new(TtlMap::new(LOCAL_DELIVERIES)),
            started: Instant::now(),
        }
    }

    /// The same layer under the bot's own user name (from the platform's `getMe`).
    pub fn named(&self, bot_name: &str) -> Chat {
        Chat {
            bot_name: bot_name.to_lowercase(),
            ..self.clone()
        }
    }

    /// Strips a leading `@bot` mention so the core sees the question alone (any
    /// mention when the platform gives no bot name, as WeCom's group robot does).
    fn strip_mention<'a>(&self, text: &'a str) -> &'a str {
        let t = text.trim_start();
        if let Some(rest) = t.strip_prefix('@') {
            let (name, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if self.bot_name.is_empty() || name.eq_ignore_ascii_case(&self.bot_name) {
                return tail.trim_start();
            }
        }
        t
    }

    /// Handles one inbound message from any channel.
    pub async fn handle(&self, m: &Inbound) -> Outcome {
        let channel = m.channel;
        let command = match &m.command {
            Some(c) => Some(c.clone()),
            None if channel.is_chat() => match command::parse(&m.text, &self.bot_name) {
                Parsed::Text => None,
                Parsed::Command(c) => Some(c),
                Parsed::NotOurs => return Outcome::Silent(Silence::NotAddressed),
            },
            None => None,
        };
        let auto = if m.group && command.is_none() && !m.mentions_bot && !m.replies_to_bot {
            match self.store.setting(&auto_key(channel, &m.chat)).await {
                Ok(v) => v.as_deref() == Some("on"),
                Err(e) => {
                    tracing::debug!(error = %e, "store unavailable: auto-answer setting unknown");
                    false
                }
            }
        } else {
            false
        };
        let addressed = !m.group || command.is_some() || m.mentions_bot || m.replies_to_bot || auto;
        if !addressed {
            return Outcome::Silent(Silence::NotAddressed);
        }
        if !m.message_id.is_empty() {
            let seen = m.delivery_key();
            let first_here = self.local_seen.put_new(&seen, (), LOCAL_DEDUPE_TTL);
            let first = match self.store.first_seen(&seen, DEDUPE_TTL).await {
                Ok(first) => first,
                Err(e) => {
                    tracing::debug!(error = %e, "store unavailable: duplicate check in process only");
                    first_here
                }
            };
            if !first {
                self.metrics.duplicate(channel);
                return Outcome::Silent(Silence::Duplicate);
            }
        }
        if let Some(outcome) = self.rate_limited(m).await {
            return outcome;
        }
        if let Some(Command::Auto(on)) = command {
            return self.auto_setting(m, on).await;
        }
        let question = match command.as_ref().and_then(Command::question) {
            Some(q) => std::borrow::Cow::Owned(q),
            None if channel.is_chat() => std::borrow::Cow::Borrowed(self.strip_mention(&m.text)),
            None => std::borrow::Cow::Borrowed(m.text.as_str()),
        };
        let key = m.conversation_key();
        let mut state = None;
        if let Some(k) = &key {
            match self.store.load(k).await {
                Ok(s) => state = s,
                Err(e) => {
                    tracing::debug!(error = %e, "store unavailable: answering without conversation context")
                }
            }
        }
        let t0 = Instant::now();
        let answered = self.advisor.answered(&question, &state.unwrap_or_default());
        let intent = answered.answer.intent;
        // Auto-answer only takes clear GPU questions; anything else stays quiet.
        if auto && matches!(intent, Intent::Unknown | Intent::Help) {
            return Outcome::Silent(Silence::NotAddressed);
        }
        self.metrics
            .question(channel, intent.id(), t0.elapsed().as_secs_f64());
        // A model name the catalog lacks is a miss too, even when a size let it be
        // answered generically: the sales team sees which models to add.
        if intent == Intent::Unknown || answered.answer.unknown_model.is_some() {
            self.misses.record(channel, &question);
        }
        if let Some(k) = key {
            if let Err(e) = self
                .store
                .save_encoded(&k, answered.state_json(), CONVERSATION_TTL)
                .await
            {
                tracing::debug!(error = %e, "store unavailable: conversation state not saved");
            }
        }
        Outcome::Answer(answered)
    }

    /// Over a limit. The webhook's client gets a retry time every time; a chat user gets
    /// one notice when a limit is first crossed in a window, then silence.
    async fn rate_limited(&self, m: &Inbound) -> Option<Outcome> {
        if !m.channel.is_chat() {
            let buckets = self.ask_buckets.as_ref()?;
            let now = self.started.elapsed().as_secs_f64();
            let wait = buckets
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(&m.user, now);
            return wait.err().map(|secs| Outcome::Limited {
                retry_after_secs: secs.ceil().max(1.0) as u64,
            });
        }
        let channel = m.channel.id();
        let window = Duration::from_secs(60);
        let checks = [
            (
                format!("user:{channel}:{}", key_part(&m.user)),
                self.limits.user_per_min,
            ),
            (
                format!("chat:{channel}:{}", key_part(&m.chat)),
                if m.group {
                    self.limits.chat_per_min
                } else {
                    u64::MAX
                },
            ),
        ];
        for (key, limit) in checks {
            match self.store.hit(&key, window).await {
                Ok(n) if n == limit.saturating_add(1) => {
                    return Some(Outcome::Notice(if is_zh(&m.text) {
                        "消息有点多，请稍等一分钟再问，我会继续回答。".to_string()
                    } else {
                        "That is a lot of questions at once: please wait a minute and ask again."
                            .to_string()
                    }));
                }
                Ok(n) if n > limit => return Some(Outcome::Silent(Silence::RateLimited)),
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "store unavailable: rate limit not applied"),
            }
        }
        None
    }

    /// `/auto on|off` from a group admin: the chat's auto-answer setting.
    async fn auto_setting(&self, m: &Inbound, on: Option<bool>) -> Outcome {
        let notice = |zh: &str, en: &str| Outcome::Notice(format!("{zh}\n{en}"));
        let Some(on) = on else {
            return notice(
                "用法：/auto on 或 /auto off（群管理员）。开启后，本群里明确的 GPU 问题不必 @ 我也会回答。",
                "Usage: /auto on or /auto off (group admins). When on, clear GPU questions in this group get answers without a mention.",
            );
        };
        if !m.group {
            return notice(
                "私聊里我本来就回答每条消息，/auto 只在群里有用。",
                "In a private chat I answer every message already; /auto is for groups.",
            );
        }
        if !m.admin {
            return notice(
                "只有群管理员可以更改自动回答设置。",
                "Only group admins can change the auto-answer setting.",
            );
        }
        match self.set_auto(m.channel, &m.chat, on).await {
            Ok(()) if on => notice(
                "已开启自动回答：本群里明确的 GPU 问题不必 @ 我也会回答（其他消息不打扰）。",
                "Auto-answer is on: clear GPU questions in this group get answers without a mention; other messages are left alone.",
            ),
            Ok(()) => notice(
                "已关闭自动回答：在群里请 @ 我、回复我的消息或使用命令。",
                "Auto-answer is off: in this group, mention me, reply to me or use a command.",
            ),
            Err(e) => {
                tracing::debug!(error = %e, "store unavailable: auto-answer setting not saved");
                notice(
                    "暂时无法保存设置，请稍后再试。",
                    "The setting could not be saved just now; please try again shortly.",
                )
            }
        }
    }

    /// Turns auto-answering of clear GPU questions in a group on or off.
    pub async fn set_auto(
        &self,
        channel: Channel,
        chat: &str,
        on: bool,
    ) -> Result<(), crate::store::StoreError> {
        self.store
            .set_setting(&auto_key(channel, chat), if on { "on" } else { "off" })
            .await
    }
}

#[cfg(test)]
mod tests;
