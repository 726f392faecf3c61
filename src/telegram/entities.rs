//! Message entities (mentions, commands, formatting) read safely. Telegram counts their
//! offsets and lengths in UTF-16 code units; teloxide's `parse_entities` panics on one
//! that ends inside a surrogate pair or past the text, and a single such update would
//! stop long polling. Here an entity that does not fall on character boundaries inside
//! the text is left out, never a panic.

use teloxide::types::{MessageEntity, MessageEntityKind};

/// The entities of `text` that fall on its character boundaries, each with the text it
/// covers; the others are dropped (and logged at debug).
pub fn entity_texts<'a>(
    text: &'a str,
    entities: &'a [MessageEntity],
) -> Vec<(&'a MessageEntityKind, &'a str)> {
    if entities.is_empty() {
        return Vec::new();
    }
    // (UTF-16 offset, byte offset) of every character boundary, the end included.
    let mut bounds = Vec::with_capacity(text.len() + 1);
    let mut utf16 = 0usize;
    for (byte, c) in text.char_indices() {
        bounds.push((utf16, byte));
        utf16 += c.len_utf16();
    }
    bounds.push((utf16, text.len()));
    let byte_at = |u: usize| {
        bounds
            .binary_search_by_key(&u, |&(u16_at, _)| u16_at)
            .ok()
            .map(|i| bounds[i].1)
    };
    entities
        .iter()
        .filter_map(|e| {
            let span = e
                .offset
                .checked_add(e.length)
                .and_then(|end| Some((byte_at(e.offset)?, byte_at(end)?)));
            match span {
                Some((start, end)) => Some((&e.kind, text.get(start..end)?)),
                None => {
                    tracing::debug!(
                        offset = e.offset,
                        length = e.length,
                        "telegram entity outside the text's character boundaries; ignored"
                    );
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(kind: MessageEntityKind, offset: usize, length: usize) -> MessageEntity {
        MessageEntity {
            kind,
            offset,
            length,
        }
    }

    #[test]
    fn offsets_count_utf16_units() {
        let text = "😀 @gpu_advisor_bot 4090";
        let es = [entity(MessageEntityKind::Mention, 3, 16)];
        let got = entity_texts(text, &es);
        assert_eq!(got, [(&MessageEntityKind::Mention, "@gpu_advisor_bot")]);
    }

    #[test]
    fn entities_off_the_boundaries_are_dropped_not_a_panic() {
        let text = "😀 hi";
        let bad = [
            // Inside the surrogate pair of 😀 (the poison update).
            entity(MessageEntityKind::Bold, 1, 2),
            entity(MessageEntityKind::Bold, 0, 1),
            // Past the end, and overflowing.
            entity(MessageEntityKind::Bold, 3, 10),
            entity(MessageEntityKind::Bold, 99, 1),
            entity(MessageEntityKind::Bold, usize::MAX, 2),
            entity(MessageEntityKind::Bold, 2, usize::MAX),
        ];
        assert!(entity_texts(text, &bad).is_empty());
        let good = [
            entity(MessageEntityKind::Bold, 0, 2),
            entity(MessageEntityKind::Italic, 3, 2),
            entity(MessageEntityKind::Code, 5, 0),
        ];
        let texts: Vec<&str> = entity_texts(text, &good).iter().map(|e| e.1).collect();
        assert_eq!(texts, ["😀", "hi", ""]);
        assert!(entity_texts("", &[entity(MessageEntityKind::Bold, 0, 1)]).is_empty());
    }
}
