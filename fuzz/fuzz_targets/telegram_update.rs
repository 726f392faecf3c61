//! A Telegram update's path: JSON → `Inbound` (entities read by UTF-16 offsets) → the
//! command or question → the core's answer → Telegram HTML in message-sized parts. Any
//! bytes as the update JSON, and as the text of a well-formed message whose entities'
//! offsets and lengths come from the input too (inside surrogate pairs, past the end).
#![no_main]

use gpu_advisor::advisor::Advisor;
use gpu_advisor::render::TELEGRAM_MAX_CHARS;
use gpu_advisor::telegram::offline::reply_parts;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::sync::OnceLock;

const BOT: &str = "gpu_advisor_bot";
const BOT_ID: u64 = 123;
const KINDS: &[&str] = &["mention", "bold", "bot_command", "italic", "code", "url"];

fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(gpu_advisor::data::embedded)
}

fn check(json: &[u8]) -> Option<Vec<String>> {
    let parts = reply_parts(advisor(), BOT, BOT_ID, json).ok()??;
    assert!(!parts.is_empty(), "an answer with no message");
    for p in &parts {
        assert!(!p.trim().is_empty(), "an empty message");
        assert!(p.chars().count() <= TELEGRAM_MAX_CHARS, "a message over the limit");
    }
    Some(parts)
}

fuzz_target!(|data: &[u8]| {
    // 1. The bytes as the update itself.
    let _ = check(data);

    // 2. The first bytes as entities (kind, offset, length), the rest as the text of a
    //    private message.
    let (head, rest) = data.split_at(data.len().min(12));
    let text = String::from_utf8_lossy(rest);
    let entities: Vec<_> = head
        .chunks_exact(3)
        .map(|c| {
            let big = |b: u8| if b == 0xff { usize::MAX } else { usize::from(b) };
            json!({
                "type": KINDS[usize::from(c[0]) % KINDS.len()],
                "offset": big(c[1]),
                "length": big(c[2]),
            })
        })
        .collect();
    let update = json!({
        "update_id": 1,
        "message": {
            "message_id": 1, "date": 1_700_000_000,
            "chat": {"id": 42, "type": "private", "first_name": "Li"},
            "from": {"id": 42, "is_bot": false, "first_name": "Li"},
            "text": text,
            "entities": entities,
        }
    });
    let parts = check(update.to_string().as_bytes());
    // A private message with some text is always a question (or one of our commands).
    if !text.trim().is_empty() && !text.trim_start().starts_with('/') {
        assert!(parts.is_some(), "a private question got no answer");
    }
});
