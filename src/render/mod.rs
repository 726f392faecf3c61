//! Rendering the neutral reply for each platform: Telegram HTML, Discord markdown and
//! embeds, WeCom plain text, and one splitter at a platform's message limit. The core's
//! `Reply` renders itself as markdown (`advisor::reply`); nothing here decides content.

pub mod discord;
pub mod split;
pub mod telegram;
pub mod wecom;

pub use discord::{discord_markdown, embed_fields, DISCORD_MAX_CHARS};
pub use split::{split, split_bytes, split_message, Unit};
pub use telegram::{escape_html, telegram_html, TELEGRAM_MAX_CHARS};
pub use wecom::plain_text;
