//! A Telegram message as the app layer's `Inbound`: text or caption, sender, mentions of
//! the bot, replies to it; or None for what is not a question.

use super::*;

/// `text` contains `@name` as a whole user name (case-insensitive).
pub(super) fn contains_mention(text: &str, name: &str) -> bool {
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
pub(super) fn likely_answered(m: &Inbound) -> bool {
    !m.group || m.mentions_bot || m.replies_to_bot || m.text.trim_start().starts_with('/')
}
