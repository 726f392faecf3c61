//! One update through the chat layer and back as HTML parts; `/auto` checked against
//! the sender's rights in the chat.

use super::*;

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
pub(super) async fn is_chat_admin(bot: &Bot, msg: &Message) -> bool {
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
