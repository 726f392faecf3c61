//! An answer as Discord shows it: markdown parts of at most 2000 characters with an
//! embed, interaction responses, and a slash command run through the chat layer.

use super::*;

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
pub(super) fn no_pings() -> CreateAllowedMentions {
    CreateAllowedMentions::new()
}

/// The single message of an interaction reply: the first part (when the answer needs
/// more, it is cut with a pointer to the console) and the embed.
pub(super) fn interaction_message(
    a: &Answer,
    console_url: &str,
) -> CreateInteractionResponseMessage {
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

pub(super) fn ephemeral(text: &str) -> CreateInteractionResponseMessage {
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
