//! The Discord adapter. Two modes, either or both:
//!
//! - **Interactions endpoint** (`DISCORD_PUBLIC_KEY`): `POST /discord/interactions`, each
//!   request checked against Discord's Ed25519 signature over `timestamp + raw body` (and
//!   a 5-minute freshness window); PING gets PONG, a slash command (`/gpu`, `/price`,
//!   `/faq`, `/compare`) gets its answer in the HTTP response itself. No gateway needed.
//! - **Gateway** (`DISCORD_TOKEN`, serenity): guild and direct messages (answered when the
//!   bot is addressed: a DM, a mention, a reply to the bot, a text command) and slash
//!   commands over the gateway; the global commands are registered at `ready`, and again
//!   whenever a catalog reload changes their choices.
//!
//! Both go through the neutral layer (`Chat::handle`); this file only translates payloads
//! and renders replies (markdown split at 2000 characters, an embed with the memory bill
//! and the price). Slash commands become the typed `app::Command` from their options, not
//! text to parse again. It must not decide whether or what to answer: addressing, dedupe,
//! limits and the answer are the app layer's. `DISCORD_API_URL` points the REST client at
//! another base URL (tests).

use crate::advisor::catalog::{Catalog, TopicKind};
use crate::advisor::reply::Block;
use crate::advisor::Answer;
use crate::app::{command, Channel, Chat, Command, Inbound, Live, Outcome, Silence};
use crate::render::{self, DISCORD_MAX_CHARS};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use ed25519_dalek::{Signature, VerifyingKey};
use serenity::all::{
    ChannelId, CommandDataOptionValue, CommandInteraction, Context, CreateAllowedMentions,
    CreateEmbed, CreateInteractionResponse, CreateInteractionResponseMessage, CreateMessage,
    EventHandler, GatewayIntents, Http, HttpBuilder, Interaction, Message, MessageId, Ready,
    UserId,
};
use serenity::async_trait;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Requests older (or newer) than this, seconds, are refused as replays.
pub const MAX_SKEW_SECS: i64 = 300;
/// Interaction bodies over this size get 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Discord's limits: embed field value, field name, title, choices per option.
pub const EMBED_FIELD_MAX: usize = 1024;
const EMBED_NAME_MAX: usize = 256;
const MAX_CHOICES: usize = 25;
const CHOICE_NAME_MAX: usize = 100;

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut o: String = s.chars().take(max.saturating_sub(1)).collect();
    o.push('…');
    o
}

// ---------------------------------------------------------------------------------------
// Signatures

/// Checks Discord's request signatures with the application's public key.
#[derive(Clone)]
pub struct Verifier {
    key: VerifyingKey,
}

impl Verifier {
    /// `hex_key`: the application's public key as shown in the developer portal.
    pub fn new(hex_key: &str) -> Result<Verifier, String> {
        let bytes =
            hex::decode(hex_key.trim()).map_err(|e| format!("DISCORD_PUBLIC_KEY: not hex: {e}"))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "DISCORD_PUBLIC_KEY: not 32 bytes (64 hex digits)".to_string())?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|_| "DISCORD_PUBLIC_KEY: not an Ed25519 public key".to_string())?;
        Ok(Verifier { key })
    }

    /// Verifies `signature_hex` (`X-Signature-Ed25519`) over `timestamp` (`X-Signature-
    /// Timestamp`) followed by `body`, and that the timestamp is within ±5 minutes of `now`.
    pub fn verify(
        &self,
        signature_hex: Option<&str>,
        timestamp: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<(), &'static str> {
        let (Some(sig), Some(ts)) = (signature_hex, timestamp) else {
            return Err("missing X-Signature-Ed25519 or X-Signature-Timestamp");
        };
        let sig: [u8; 64] = hex::decode(sig.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or("malformed signature")?;
        let sig = Signature::from_bytes(&sig);
        let mut msg = Vec::with_capacity(ts.len() + body.len());
        msg.extend_from_slice(ts.as_bytes());
        msg.extend_from_slice(body);
        self.key
            .verify_strict(&msg, &sig)
            .map_err(|_| "bad signature")?;
        let t: i64 = ts.trim().parse().map_err(|_| "malformed timestamp")?;
        if (now - t).abs() > MAX_SKEW_SECS {
            return Err("stale timestamp");
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Commands

/// The application commands (a JSON array for `PUT /applications/{id}/commands`), with
/// choices from the catalog: offers for `/price`, cards for `/compare`, FAQ topics for
/// `/faq` (at most 25 each).
pub fn command_definitions(catalog: &Catalog) -> serde_json::Value {
    let choice = |name: &str, value: &str| serde_json::json!({"name": cut(name, CHOICE_NAME_MAX), "value": value});
    let offers: Vec<_> = catalog
        .offers
        .iter()
        .take(MAX_CHOICES)
        .map(|o| choice(&o.name_en, &o.id))
        .collect();
    let cards: Vec<_> = catalog
        .gpus
        .iter()
        .take(MAX_CHOICES)
        .map(|g| choice(&g.name, &g.id))
        .collect();
    let topics: Vec<_> = catalog
        .topics
        .iter()
        .filter(|t| t.kind == TopicKind::Faq)
        .take(MAX_CHOICES)
        .map(|t| choice(&t.title_en, &t.id))
        .collect();
    let string_opt = |name: &str, desc: &str, desc_zh: &str, required: bool| {
        serde_json::json!({
            "type": 3, "name": name, "description": desc,
            "description_localizations": {"zh-CN": desc_zh},
            "required": required,
        })
    };
    let with_choices = |mut o: serde_json::Value, choices: &[serde_json::Value]| {
        o["choices"] = serde_json::Value::Array(choices.to_vec());
        o
    };
    serde_json::json!([
        {
            "name": "gpu", "type": 1,
            "description": "Ask which GPU fits a workload (model, task, budget...)",
            "description_localizations": {"zh-CN": "问哪种 GPU 适合你的任务（模型、训练/推理、预算…）"},
            "options": [string_opt("question", "Your question, e.g. 4090 能跑 70B 吗", "你的问题，例如：微调 Qwen-14B 要什么卡", true)],
        },
        {
            "name": "price", "type": 1,
            "description": "Monthly and annual price of a rentable configuration",
            "description_localizations": {"zh-CN": "查看某个配置的月付和年付价格"},
            "options": [with_choices(string_opt("card", "The configuration", "配置", true), &offers)],
        },
        {
            "name": "faq", "type": 1,
            "description": "Frequently asked questions about GPU rental",
            "description_localizations": {"zh-CN": "GPU 租用常见问题"},
            "options": [with_choices(string_opt("topic", "The topic", "主题", true), &topics)],
        },
        {
            "name": "compare", "type": 1,
            "description": "Compare two cards side by side",
            "description_localizations": {"zh-CN": "对比两张卡"},
            "options": [
                with_choices(string_opt("a", "First card", "第一张卡", true), &cards),
                with_choices(string_opt("b", "Second card", "第二张卡", true), &cards),
            ],
        },
        {
            "name": "auto", "type": 1,
            "description": "Answer clear GPU questions in this channel without a mention",
            "description_localizations": {"zh-CN": "本频道中明确的 GPU 问题无需 @ 也回答"},
            // Shown to members with Manage Server only; checked again on use.
            "default_member_permissions": "32",
            "dm_permission": false,
            "options": [with_choices(
                string_opt("enabled", "on or off", "开启或关闭", true),
                &[choice("on", "on"), choice("off", "off")],
            )],
        },
    ])
}

/// A slash command, from the interactions endpoint's JSON or the gateway's interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct SlashCommand {
    pub interaction_id: String,
    pub name: String,
    /// Top-level options as (name, value).
    pub options: Vec<(String, String)>,
    /// The channel id (the guild id when there is no channel).
    pub chat: String,
    pub user: String,
    pub guild: bool,
    /// The invoking member has Administrator or Manage Server.
    pub admin: bool,
}

/// Discord permission bits (ADMINISTRATOR, MANAGE_GUILD) that may change chat settings.
const SETTINGS_PERMISSIONS: u64 = 0x8 | 0x20;

impl SlashCommand {
    fn option(&self, name: &str) -> &str {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.trim())
    }

    /// The typed command from the options Discord delivers (no text to parse again),
    /// or None for a command we do not have.
    pub fn command(&self) -> Option<Command> {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let one_word = |s: &str| s.split_whitespace().collect::<String>();
        Some(match self.name.as_str() {
            "gpu" | "ask" => match self.option("question") {
                "" => Command::Help,
                q => Command::Ask(q.to_string()),
            },
            "price" => Command::Price(some(self.option("card"))),
            "faq" => Command::Faq(some(self.option("topic"))),
            "compare" => Command::Compare(
                [self.option("a"), self.option("b")]
                    .into_iter()
                    .map(one_word)
                    .filter(|w| !w.is_empty())
                    .collect(),
            ),
            "help" => Command::Help,
            "auto" => Command::Auto(command::on_off(self.option("enabled"))),
            _ => return None,
        })
    }

    /// The neutral inbound message: a slash command always addresses the bot.
    pub fn inbound(&self) -> Option<Inbound> {
        let command = self.command()?;
        Some(Inbound {
            channel: Channel::Discord,
            chat: self.chat.clone(),
            user: self.user.clone(),
            message_id: self.interaction_id.clone(),
            // The question as the user wrote it, for the logs; the typed command decides.
            text: self
                .options
                .iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            command: Some(command),
            group: self.guild,
            mentions_bot: true,
            replies_to_bot: false,
            admin: self.admin,
        })
    }

    /// From an interaction's JSON (type 2).
    pub fn from_json(v: &serde_json::Value) -> Option<SlashCommand> {
        let s = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        let data = v.get("data")?;
        let options = data
            .get("options")
            .and_then(|o| o.as_array())
            .map(|opts| {
                opts.iter()
                    .filter_map(|o| Some((s(o.get("name")?)?, s(o.get("value")?)?)))
                    .collect()
            })
            .unwrap_or_default();
        let guild = v.get("guild_id").and_then(s);
        let chat = v
            .get("channel_id")
            .and_then(s)
            .or_else(|| v.pointer("/channel/id").and_then(s))
            .or_else(|| guild.clone())
            .unwrap_or_default();
        let user = v
            .pointer("/member/user/id")
            .and_then(s)
            .or_else(|| v.pointer("/user/id").and_then(s))
            .unwrap_or_default();
        Some(SlashCommand {
            interaction_id: v.get("id").and_then(s).unwrap_or_default(),
            name: s(data.get("name")?)?,
            options,
            chat,
            user,
            guild: guild.is_some(),
            admin: v
                .pointer("/member/permissions")
                .and_then(|p| p.as_str())
                .and_then(|p| p.parse::<u64>().ok())
                .is_some_and(|p| p & SETTINGS_PERMISSIONS != 0),
        })
    }

    /// From a gateway interaction.
    pub fn from_interaction(ci: &CommandInteraction) -> SlashCommand {
        let options = ci
            .data
            .options
            .iter()
            .filter_map(|o| {
                let v = match &o.value {
                    CommandDataOptionValue::String(s) => s.clone(),
                    CommandDataOptionValue::Integer(i) => i.to_string(),
                    CommandDataOptionValue::Number(n) => n.to_string(),
                    CommandDataOptionValue::Boolean(b) => b.to_string(),
                    _ => return None,
                };
                Some((o.name.clone(), v))
            })
            .collect();
        let user = ci.member.as_ref().map_or(ci.user.id, |m| m.user.id);
        SlashCommand {
            interaction_id: ci.id.to_string(),
            name: ci.data.name.clone(),
            options,
            chat: ci.channel_id.to_string(),
            user: user.to_string(),
            guild: ci.guild_id.is_some(),
            admin: ci
                .member
                .as_ref()
                .and_then(|m| m.permissions)
                .is_some_and(|p| p.bits() & SETTINGS_PERMISSIONS != 0),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rendering

/// An answer as Discord messages: markdown parts of at most 2000 characters, and the
/// embed (title and fields) that goes with the first part.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub parts: Vec<String>,
    pub title: String,
    /// (name, value) with values of at most 1024 characters.
    pub fields: Vec<(String, String)>,
}

impl Rendered {
    pub fn embed(&self) -> Option<CreateEmbed> {
        if self.fields.is_empty() {
            return None;
        }
        Some(
            CreateEmbed::new().title(&self.title).fields(
                self.fields
                    .iter()
                    .map(|(n, v)| (n.clone(), v.clone(), false)),
            ),
        )
    }
}

pub fn render_answer(a: &Answer) -> Rendered {
    let md = render::discord_markdown(&a.rendered);
    let mut parts = render::split_message(&md, DISCORD_MAX_CHARS);
    if parts.is_empty() {
        parts.push(
            if a.lang == "zh" {
                "（没有内容）"
            } else {
                "(empty)"
            }
            .to_string(),
        );
    }
    let title = a
        .rendered
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Title(t) => Some(t.replace("**", "")),
            _ => None,
        })
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| {
            if a.lang == "zh" {
                "GPU 顾问"
            } else {
                "GPU advisor"
            }
            .to_string()
        });
    let fields = render::embed_fields(a)
        .into_iter()
        .take(25)
        .map(|(n, v)| (cut(&n, EMBED_NAME_MAX), cut(&v, EMBED_FIELD_MAX)))
        .collect();
    Rendered {
        parts,
        title: cut(&title, EMBED_NAME_MAX),
        fields,
    }
}

/// No pings from our replies (the answer may quote the asker's text).
fn no_pings() -> CreateAllowedMentions {
    CreateAllowedMentions::new()
}

/// The single message of an interaction reply: the first part (when the answer needs
/// more, it is cut with a pointer to the console) and the embed.
fn interaction_message(a: &Answer, console_url: &str) -> CreateInteractionResponseMessage {
    let r = render_answer(a);
    let content = if r.parts.len() > 1 {
        let more = if a.lang == "zh" {
            format!("\n…（完整回答：{console_url}）")
        } else {
            format!("\n… (full answer: {console_url})")
        };
        let md = render::discord_markdown(&a.rendered);
        let room = DISCORD_MAX_CHARS.saturating_sub(more.chars().count());
        let first = render::split_message(&md, room)
            .into_iter()
            .next()
            .unwrap_or_default();
        format!("{first}{more}")
    } else {
        r.parts[0].clone()
    };
    let mut m = CreateInteractionResponseMessage::new()
        .content(content)
        .allowed_mentions(no_pings());
    if let Some(e) = r.embed() {
        m = m.embed(e);
    }
    m
}

fn ephemeral(text: &str) -> CreateInteractionResponseMessage {
    CreateInteractionResponseMessage::new()
        .content(cut(text, DISCORD_MAX_CHARS))
        .ephemeral(true)
        .allowed_mentions(no_pings())
}

/// Runs a slash command through the chat layer and builds the interaction response.
pub async fn answer_command(
    chat: &Chat,
    cmd: &SlashCommand,
    console_url: &str,
) -> CreateInteractionResponse {
    let Some(inbound) = cmd.inbound() else {
        return CreateInteractionResponse::Message(ephemeral(
            "Unknown command: try /gpu, /price, /faq or /compare.",
        ));
    };
    let msg = match chat.handle(&inbound).await {
        Outcome::Answer(a) => interaction_message(&a.answer, console_url),
        Outcome::Notice(n) => ephemeral(&n),
        Outcome::Silent(Silence::RateLimited) | Outcome::Limited { .. } => {
            ephemeral("That is a lot of questions at once: please wait a minute and ask again.")
        }
        Outcome::Silent(Silence::Duplicate) => ephemeral("Already answered."),
        Outcome::Silent(Silence::NotAddressed) => ephemeral("Try /gpu <your question>."),
    };
    CreateInteractionResponse::Message(msg)
}

// ---------------------------------------------------------------------------------------
// Mode A: the interactions endpoint

struct Endpoint {
    chat: Chat,
    console_url: String,
    verifier: Verifier,
}

const ROUTE: &str = "/discord/interactions";

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A JSON error `{"error": {"code", "message"}}`, as every route of the server answers.
fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

async fn interactions(
    State(ep): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let checked = ep.verifier.verify(
        header(&headers, "x-signature-ed25519"),
        header(&headers, "x-signature-timestamp"),
        &body,
        unix_now(),
    );
    if let Err(why) = checked {
        return error(StatusCode::UNAUTHORIZED, "unauthorized", why);
    }
    let v: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!(
                    "malformed interaction at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        }
    };
    match v.get("type").and_then(|t| t.as_u64()) {
        Some(1) => Json(serde_json::json!({"type": 1})).into_response(),
        Some(2) => {
            let Some(cmd) = SlashCommand::from_json(&v) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_interaction",
                    "an application command needs data.name",
                );
            };
            let r = answer_command(&ep.chat, &cmd, &ep.console_url).await;
            Json(r).into_response()
        }
        _ => error(
            StatusCode::BAD_REQUEST,
            "bad_interaction",
            "unsupported interaction type",
        ),
    }
}

/// The router with `POST /discord/interactions`, to merge into the app's router.
pub fn interactions_routes(
    chat: &Chat,
    console_url: &str,
    public_key_hex: &str,
) -> Result<Router, String> {
    let verifier = Verifier::new(public_key_hex)?;
    let ep = Arc::new(Endpoint {
        chat: chat.clone(),
        console_url: console_url.to_string(),
        verifier,
    });
    Ok(Router::new()
        .route(ROUTE, post(interactions))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(ep))
}

// ---------------------------------------------------------------------------------------
// Mode B: the gateway

/// Strips mentions of the bot (`<@id>`, `<@!id>`) from a message's text.
pub fn strip_bot_mentions(text: &str, bot: UserId) -> String {
    let a = format!("<@{bot}>");
    let b = format!("<@!{bot}>");
    text.replace(&a, " ")
        .replace(&b, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The neutral inbound message of a gateway message, or None for bots' messages.
pub fn inbound_from_message(msg: &Message, bot: UserId) -> Option<Inbound> {
    if msg.author.bot || msg.author.id == bot {
        return None;
    }
    let mentions_bot = msg.mentions_user_id(bot);
    let replies_to_bot = msg
        .referenced_message
        .as_ref()
        .is_some_and(|r| r.author.id == bot);
    Some(Inbound {
        channel: Channel::Discord,
        chat: msg.channel_id.to_string(),
        user: msg.author.id.to_string(),
        message_id: msg.id.to_string(),
        text: strip_bot_mentions(&msg.content, bot),
        group: msg.guild_id.is_some(),
        mentions_bot,
        replies_to_bot,
        // Settings change through the `/auto` slash command, whose member permissions
        // Discord supplies.
        admin: false,
        command: None,
    })
}

/// Sends `answer` to `channel_id` as a reply to `reply_to`: markdown parts of at most 2000
/// characters, the first carrying the message reference and the embed.
pub async fn send_reply(
    http: &Http,
    channel_id: ChannelId,
    reply_to: MessageId,
    answer: &Answer,
) -> Result<(), serenity::Error> {
    let r = render_answer(answer);
    for (i, part) in r.parts.iter().enumerate() {
        let mut m = CreateMessage::new()
            .content(part)
            .allowed_mentions(no_pings());
        if i == 0 {
            m = m.reference_message((channel_id, reply_to));
            if let Some(e) = r.embed() {
                m = m.embed(e);
            }
        }
        channel_id.send_message(http, m).await?;
    }
    Ok(())
}

/// Sends a plain text reply (a notice).
pub async fn send_text(
    http: &Http,
    channel_id: ChannelId,
    reply_to: MessageId,
    text: &str,
) -> Result<(), serenity::Error> {
    let m = CreateMessage::new()
        .content(cut(text, DISCORD_MAX_CHARS))
        .reference_message((channel_id, reply_to))
        .allowed_mentions(no_pings());
    channel_id.send_message(http, m).await.map(|_| ())
}

/// The gateway event handler.
pub struct Handler {
    chat: Chat,
    console_url: String,
    /// The bot's id and its chat layer (with its name), known from `ready`.
    me: OnceLock<(UserId, Arc<Chat>)>,
    commands: Arc<CommandSync>,
    /// Set once the task that follows catalog reloads runs (`ready` comes again on
    /// every reconnect).
    following: std::sync::atomic::AtomicBool,
}

/// The global slash commands as last registered, so that a reconnect or a reload that
/// leaves their choices as they were costs no call to Discord.
#[derive(Default)]
pub struct CommandSync {
    registered: tokio::sync::Mutex<Option<serde_json::Value>>,
}

impl CommandSync {
    /// Registers the commands for `catalog` unless exactly these are registered already;
    /// true when it called Discord. The application id must be set on `http`.
    pub async fn sync(&self, http: &Http, catalog: &Catalog) -> serenity::Result<bool> {
        let defs = command_definitions(catalog);
        let mut registered = self.registered.lock().await;
        if registered.as_ref() == Some(&defs) {
            return Ok(false);
        }
        let c = http.create_global_commands(&defs).await?;
        tracing::info!(commands = c.len(), "discord commands registered");
        *registered = Some(defs);
        Ok(true)
    }

    /// Registers the commands again after every reload of `live` that changes them,
    /// until `live` is dropped (the task holds it weakly).
    pub fn follow(
        self: Arc<Self>,
        http: Arc<Http>,
        live: &Arc<Live>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let mut changes = live.changes();
        changes.mark_unchanged();
        let live = Arc::downgrade(live);
        async move {
            while changes.changed().await.is_ok() {
                let Some(advisor) = live.upgrade().map(|l| l.get()) else {
                    return;
                };
                if let Err(e) = self.sync(&http, &advisor.catalog).await {
                    tracing::warn!(error = %e, "discord: updating commands after a reload failed");
                }
            }
        }
    }
}

impl Handler {
    pub fn new(chat: &Chat, console_url: &str) -> Handler {
        Handler {
            chat: chat.clone(),
            console_url: console_url.to_string(),
            me: OnceLock::new(),
            commands: Arc::default(),
            following: Default::default(),
        }
    }

    fn chat_for(&self, name: &str) -> Arc<Chat> {
        Arc::new(self.chat.named(name))
    }

    async fn me(&self, http: &Http) -> Option<(UserId, Arc<Chat>)> {
        if let Some(me) = self.me.get() {
            return Some(me.clone());
        }
        match http.get_current_user().await {
            Ok(u) => Some(
                self.me
                    .get_or_init(|| (u.id, self.chat_for(&u.name)))
                    .clone(),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "discord: cannot get the bot user");
                None
            }
        }
    }
}

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let _ = self
            .me
            .set((ready.user.id, self.chat_for(&ready.user.name)));
        ctx.http.set_application_id(ready.application.id);
        tracing::info!(bot = %ready.user.name, guilds = ready.guilds.len(), "discord gateway ready");
        let advisor = self.chat.advisor.get();
        if let Err(e) = self.commands.sync(&ctx.http, &advisor.catalog).await {
            tracing::warn!(error = %e, "discord: registering commands failed");
        }
        if !self
            .following
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            let follow =
                Arc::clone(&self.commands).follow(Arc::clone(&ctx.http), &self.chat.advisor);
            tokio::spawn(follow);
        }
    }

    async fn message(&self, ctx: Context, msg: Message) {
        if msg.author.bot {
            return;
        }
        let Some((bot, chat)) = self.me(&ctx.http).await else {
            return;
        };
        let Some(inbound) = inbound_from_message(&msg, bot) else {
            return;
        };
        let sent = match chat.handle(&inbound).await {
            Outcome::Answer(a) => send_reply(&ctx.http, msg.channel_id, msg.id, &a.answer).await,
            Outcome::Notice(n) => send_text(&ctx.http, msg.channel_id, msg.id, &n).await,
            Outcome::Silent(_) | Outcome::Limited { .. } => Ok(()),
        };
        if let Err(e) = sent {
            tracing::warn!(error = %e, "discord: sending the reply failed");
        }
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let Interaction::Command(ci) = interaction else {
            return;
        };
        let chat = match self.me(&ctx.http).await {
            Some((_, chat)) => chat,
            None => Arc::new(self.chat.clone()),
        };
        let cmd = SlashCommand::from_interaction(&ci);
        let r = answer_command(&chat, &cmd, &self.console_url).await;
        if let Err(e) = ci.create_response(&ctx.http, r).await {
            tracing::warn!(error = %e, "discord: answering the interaction failed");
        }
    }
}

/// The REST client: `api_url` (`DISCORD_API_URL`) replaces `https://discord.com` in
/// every request URL. serenity 0.12 applies that override only with its own rate limiter
/// off (its rate limiter builds requests without it), so with an override the server
/// behind it (a rate-limiting proxy such as twilight-http-proxy, or a test fake) limits.
pub fn http_client(token: &str, api_url: Option<&str>) -> Http {
    let mut b = HttpBuilder::new(token);
    if let Some(url) = api_url {
        b = b
            .proxy(url.trim_end_matches('/'))
            .ratelimiter_disabled(true);
    }
    b.build()
}

/// The gateway intents the bot asks for.
pub fn intents() -> GatewayIntents {
    GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
}

/// Connects to the gateway and answers until `shutdown` resolves.
pub async fn run_gateway(
    handler: Handler,
    token: String,
    api_url: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let http = http_client(&token, api_url.as_deref());
    let mut client = serenity::all::ClientBuilder::new_with_http(http, intents())
        .event_handler(handler)
        .await
        .map_err(|e| format!("discord client: {e}"))?;
    let shards = Arc::clone(&client.shard_manager);
    tokio::select! {
        r = client.start() => r.map_err(|e| format!("discord gateway: {e}")),
        _ = shutdown => {
            shards.shutdown_all().await;
            Ok(())
        }
    }
}

/// Starts what the settings ask for: returns the interactions router when
/// `DISCORD_PUBLIC_KEY` is set, and spawns the gateway when `DISCORD_TOKEN` is.
pub async fn start(
    chat: &Chat,
    d: &crate::config::Discord,
    console_url: &str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Option<Router>, String> {
    let router = match &d.public_key {
        Some(k) => Some(interactions_routes(chat, console_url, k)?),
        None => None,
    };
    if let Some(token) = &d.token {
        let token = token.expose().to_string();
        let handler = Handler::new(chat, console_url);
        let api_url = d.api_url.clone();
        tokio::spawn(async move {
            if let Err(e) = run_gateway(handler, token, api_url, shutdown).await {
                tracing::error!(error = %e, "discord gateway stopped");
            }
        });
    }
    Ok(router)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interaction_replies_fit_one_message() {
        let adv = crate::data::embedded();
        let (mut a, _) = adv.answer("4090 能跑 70B 吗", &Default::default());
        a.rendered.blocks.push(Block::Bullets(
            (0..100)
                .map(|i| format!("line {i} of a long answer"))
                .collect(),
        ));
        let v = serde_json::to_value(CreateInteractionResponse::Message(interaction_message(
            &a,
            "https://console.example/",
        )))
        .unwrap();
        assert_eq!(v["type"], 4);
        let c = v["data"]["content"].as_str().unwrap();
        assert!(
            c.chars().count() <= DISCORD_MAX_CHARS,
            "{}",
            c.chars().count()
        );
        assert!(c.ends_with("（完整回答：https://console.example/）"), "{c}");
        assert!(!v["data"]["embeds"][0]["fields"]
            .as_array()
            .unwrap()
            .is_empty());
        assert_eq!(
            v["data"]["allowed_mentions"]["parse"],
            serde_json::json!([])
        );
    }

    #[test]
    fn bot_mentions_are_stripped() {
        let bot = UserId::new(42);
        assert_eq!(
            strip_bot_mentions("<@42> hi  <@!42> there <@7>", bot),
            "hi there <@7>"
        );
    }
}
