//! One update's path without the network or the store, for the fuzz target and its
//! proptest: update JSON → `Inbound` → the command or question → the core's answer →
//! Telegram HTML in message-sized parts. It skips what needs IO (dedupe, limits, the
//! conversation) and must not be used to answer users: that is `app::Chat`'s.

use super::inbound;
use crate::advisor::{Advisor, State};
use crate::app::{command, Parsed};
use crate::render;
use teloxide::types::{Update, UserId};

/// The HTML parts the core's answer to an update would be sent as, for the bot
/// `bot_name` (lowercase, no `@`) with user id `bot_id`: `Err` for JSON that is not an
/// update, `Ok(None)` for an update that is not a question (no text, a bot, a command
/// for another bot, `/auto`).
pub fn reply_parts(
    advisor: &Advisor,
    bot_name: &str,
    bot_id: u64,
    update_json: &[u8],
) -> Result<Option<Vec<String>>, serde_json::Error> {
    let update: Update = serde_json::from_slice(update_json)?;
    let Some(m) = inbound(&update, bot_name, UserId(bot_id)) else {
        return Ok(None);
    };
    let question = match command::parse(&m.text, bot_name) {
        Parsed::Text => m.text.clone(),
        Parsed::Command(c) => match c.question() {
            Some(q) => q,
            None => return Ok(None),
        },
        Parsed::NotOurs => return Ok(None),
    };
    let (answer, _) = advisor.answer(&question, &State::default());
    Ok(Some(render::split_message(
        &render::telegram_html(&answer.rendered),
        render::TELEGRAM_MAX_CHARS,
    )))
}
