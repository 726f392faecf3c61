//! The app layer between chat adapters and the core: one `Chat::handle` for every
//! platform. It decides whether a message is addressed to the bot, drops duplicate
//! deliveries, applies per-user and per-chat rate limits (with one polite notice),
//! turns commands into questions, loads and saves the conversation state in the store,
//! and runs the core. Adapters only translate payloads and render replies.

use crate::advisor::{Answer, Intent, State};
use crate::live::Live;
use crate::metrics::Metrics;
use crate::store::Store;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Conversation state lives this long after the last message.
pub const CONVERSATION_TTL: Duration = Duration::from_secs(30 * 60);
/// A delivery id is remembered this long (platform retries come within minutes).
pub const DEDUPE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Default limits: a user, a group (messages per minute).
pub const USER_PER_MIN: u64 = 10;
pub const CHAT_PER_MIN: u64 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Telegram,
    Discord,
    Wecom,
}

impl Platform {
    pub fn id(self) -> &'static str {
        match self {
            Platform::Telegram => "telegram",
            Platform::Discord => "discord",
            Platform::Wecom => "wecom",
        }
    }
}

/// A platform-neutral inbound message.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbound {
    pub platform: Platform,
    pub chat: String,
    pub user: String,
    /// The platform's id of this delivery (update id, message id, MsgId).
    pub message_id: String,
    pub text: String,
    pub group: bool,
    pub mentions_bot: bool,
    pub replies_to_bot: bool,
    /// The platform confirmed the sender may change this chat's settings (a group admin
    /// or owner; Discord: Manage Server). Adapters check it only for `/auto`.
    pub admin: bool,
}

/// `/auto on|off` (or `/auto@bot …`): Some(Some(on)), Some(None) for `/auto` with another
/// argument, None for any other text.
pub fn auto_command(text: &str, bot_name: &str) -> Option<Option<bool>> {
    let (cmd, args) = split_command(text, bot_name)??;
    if cmd != "auto" {
        return None;
    }
    Some(match args.to_lowercase().as_str() {
        "on" | "true" | "1" | "开" | "开启" | "打开" => Some(true),
        "off" | "false" | "0" | "关" | "关闭" => Some(false),
        _ => None,
    })
}

/// `/cmd@bot args` as (lowercase command, trimmed args); None for plain text, Some(None)
/// for a command addressed to another bot.
fn split_command<'a>(text: &'a str, bot_name: &str) -> Option<Option<(String, &'a str)>> {
    let rest = text.trim().strip_prefix('/')?;
    let (head, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let (cmd, target) = head.split_once('@').unwrap_or((head, ""));
    if !target.is_empty() && !bot_name.is_empty() && !target.eq_ignore_ascii_case(bot_name) {
        return Some(None);
    }
    Some(Some((cmd.to_ascii_lowercase(), args.trim())))
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
    Answer(Box<Answer>),
    /// A plain notice (rate limit, a setting changed), in the asker's language.
    Notice(String),
    Silent(Silence),
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub user_per_min: u64,
    pub chat_per_min: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            user_per_min: USER_PER_MIN,
            chat_per_min: CHAT_PER_MIN,
        }
    }
}

pub struct Chat {
    pub advisor: Arc<Live>,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<Metrics>,
    pub limits: Limits,
    /// The bot's user name (for `/cmd@name` and `@name` mentions), lowercase.
    pub bot_name: String,
}

fn is_zh(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// A command turned into a question, or None for plain text. `/cmd@bot` works; a
/// command addressed to another bot is not ours (Some(None)).
pub fn command_question(text: &str, bot_name: &str) -> Option<Option<String>> {
    let Some((cmd, args)) = split_command(text, bot_name)? else {
        return Some(None);
    };
    let q = match cmd.as_str() {
        "start" | "help" => "/help".to_string(),
        "gpu" | "ask" if !args.is_empty() => args.to_string(),
        "gpu" | "ask" => "/help".to_string(),
        "price" if args.is_empty() => "价格表".to_string(),
        "price" => format!("{args} 多少钱"),
        "cards" => "价格表".to_string(),
        "faq" if args.is_empty() => "常见问题 FAQ".to_string(),
        "faq" => args.replace('-', " "),
        "compare" => {
            let parts: Vec<&str> = args.split_whitespace().collect();
            if parts.len() >= 2 {
                format!("{} vs {}", parts[0], parts[1..].join(" vs "))
            } else {
                "/help".to_string()
            }
        }
        "budget" => format!("预算 {args}"),
        "auto" => "/auto".to_string(),
        _ => return Some(None),
    };
    Some(Some(q))
}

impl Chat {
    fn state_key(m: &Inbound) -> String {
        // Groups share one conversation per user; private chats are one conversation.
        format!("{}:{}:{}", m.platform.id(), m.chat, m.user)
    }

    /// Strips a leading `@bot` mention so the core sees the question alone.
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

    /// Handles one inbound message.
    pub async fn handle(&self, m: &Inbound) -> Outcome {
        let channel = m.platform.id();
        let command = command_question(&m.text, &self.bot_name);
        if matches!(command, Some(None)) {
            return Outcome::Silent(Silence::NotAddressed);
        }
        let auto = if m.group && command.is_none() && !m.mentions_bot && !m.replies_to_bot {
            let key = format!("auto:{channel}:{}", m.chat);
            match self.store.setting(&key).await {
                Ok(v) => v.as_deref() == Some("on"),
                Err(e) => {
                    tracing::warn!(error = %e, "store unavailable: auto-answer setting unknown");
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
        match self
            .store
            .first_seen(
                &format!("seen:{channel}:{}:{}", m.chat, m.message_id),
                DEDUPE_TTL,
            )
            .await
        {
            Ok(false) => {
                self.metrics.duplicate(channel);
                return Outcome::Silent(Silence::Duplicate);
            }
            Ok(true) => {}
            Err(e) => tracing::warn!(error = %e, "store unavailable: duplicate check skipped"),
        }
        if let Some(outcome) = self.rate_limited(m).await {
            return outcome;
        }
        if let Some(on) = auto_command(&m.text, &self.bot_name) {
            return self.auto_setting(m, on).await;
        }
        let question = match &command {
            Some(Some(q)) => q.clone(),
            _ => self.strip_mention(&m.text).to_string(),
        };
        let key = Self::state_key(m);
        let state = match self.store.load(&key).await {
            Ok(s) => s.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(error = %e, "store unavailable: answering without conversation context");
                State::default()
            }
        };
        let t0 = Instant::now();
        let (answer, next) = self.advisor.answer(&question, &state);
        // Auto-answer only takes clear GPU questions; anything else stays quiet.
        if auto && matches!(answer.intent, Intent::Unknown | Intent::Help) {
            return Outcome::Silent(Silence::NotAddressed);
        }
        self.metrics
            .question(channel, answer.intent.id(), t0.elapsed().as_secs_f64());
        if answer.intent == Intent::Unknown {
            let q: String = question.chars().take(300).collect();
            tracing::info!(channel, question = %q, "unanswered question");
        }
        if let Err(e) = self.store.save(&key, &next, CONVERSATION_TTL).await {
            tracing::warn!(error = %e, "store unavailable: conversation state not saved");
        }
        Outcome::Answer(Box::new(answer))
    }

    /// Over a limit: one notice when it is first crossed in a window, then silence.
    async fn rate_limited(&self, m: &Inbound) -> Option<Outcome> {
        let channel = m.platform.id();
        let window = Duration::from_secs(60);
        let checks = [
            (
                format!("user:{channel}:{}", m.user),
                self.limits.user_per_min,
            ),
            (
                format!("chat:{channel}:{}", m.chat),
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
                Err(e) => tracing::warn!(error = %e, "store unavailable: rate limit not applied"),
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
        match self.set_auto(m.platform, &m.chat, on).await {
            Ok(()) if on => notice(
                "已开启自动回答：本群里明确的 GPU 问题不必 @ 我也会回答（其他消息不打扰）。",
                "Auto-answer is on: clear GPU questions in this group get answers without a mention; other messages are left alone.",
            ),
            Ok(()) => notice(
                "已关闭自动回答：在群里请 @ 我、回复我的消息或使用命令。",
                "Auto-answer is off: in this group, mention me, reply to me or use a command.",
            ),
            Err(e) => {
                tracing::warn!(error = %e, "store unavailable: auto-answer setting not saved");
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
        platform: Platform,
        chat: &str,
        on: bool,
    ) -> Result<(), crate::store::StoreError> {
        self.store
            .set_setting(
                &format!("auto:{}:{chat}", platform.id()),
                if on { "on" } else { "off" },
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_become_questions() {
        assert_eq!(
            command_question("/price@gpu_bot a100", "gpu_bot"),
            Some(Some("a100 多少钱".into()))
        );
        assert_eq!(
            command_question("/price@other_bot a100", "gpu_bot"),
            Some(None)
        );
        assert_eq!(
            command_question("/gpu 4090 能跑 70B 吗", "gpu_bot"),
            Some(Some("4090 能跑 70B 吗".into()))
        );
        assert_eq!(
            command_question("/compare 4090 a100", ""),
            Some(Some("4090 vs a100".into()))
        );
        assert_eq!(
            command_question("/budget 3000", ""),
            Some(Some("预算 3000".into()))
        );
        assert_eq!(command_question("/start", ""), Some(Some("/help".into())));
        assert_eq!(command_question("hello", ""), None);
        assert_eq!(command_question("/unknowncmd", ""), Some(None));
    }
}
