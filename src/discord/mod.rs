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

mod commands;
mod gateway;
mod interactions;
mod reply;
mod verify;

pub use commands::*;
pub use gateway::*;
pub use interactions::*;
pub use reply::*;
pub use verify::*;

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
