//! The chat layer's rules, on the in-memory store: one `check(messages, expected)` helper
//! runs a conversation of inbound messages and compares what each one got.

use super::*;
use crate::store::MemoryStore;

fn chat(limits: Limits, misses: Option<&str>) -> Chat {
    let metrics = Arc::new(Metrics::new());
    Chat::new(
        Arc::new(Live::new(crate::data::embedded())),
        Arc::new(MemoryStore::new(1000)),
        metrics,
        Arc::new(Misses::new(misses)),
        limits,
    )
    .named("gpu_bot")
}

/// What a message got, in a word: "answer:<intent>", "notice", "limited:<secs>",
/// "silent:<why>".
fn outcome(o: &Outcome) -> String {
    match o {
        Outcome::Answer(a) => format!("answer:{}", a.answer.intent.id()),
        Outcome::Notice(_) => "notice".into(),
        Outcome::Limited { retry_after_secs } => format!("limited:{retry_after_secs}"),
        Outcome::Silent(s) => format!("silent:{s:?}"),
    }
}

fn check(chat: &Chat, messages: &[Inbound], expected: &[&str]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let got: Vec<String> = rt.block_on(async {
        let mut got = Vec::new();
        for m in messages {
            got.push(outcome(&chat.handle(m).await));
        }
        got
    });
    assert_eq!(got, expected);
}

fn msg(channel: Channel, id: &str, text: &str, group: bool) -> Inbound {
    Inbound {
        channel,
        chat: "c1".into(),
        user: "u1".into(),
        message_id: id.into(),
        text: text.into(),
        group,
        ..Inbound::default()
    }
}

#[test]
fn every_chat_channel_gets_the_same_addressing_dedupe_and_commands() {
    for channel in [Channel::Telegram, Channel::Discord, Channel::Wecom] {
        let c = chat(Limits::default(), None);
        check(
            &c,
            &[
                msg(channel, "1", "4090 能跑 70B 吗", false),
                msg(channel, "1", "4090 能跑 70B 吗", false),
                msg(channel, "2", "4090 能跑 70B 吗", true),
                Inbound {
                    mentions_bot: true,
                    ..msg(channel, "3", "@gpu_bot 4090 能跑 70B 吗", true)
                },
                msg(channel, "4", "/price@gpu_bot a100", true),
                msg(channel, "5", "/price@other_bot a100", true),
                msg(channel, "6", "/auto on", true),
            ],
            &[
                "answer:feasibility",
                "silent:Duplicate",
                "silent:NotAddressed",
                "answer:feasibility",
                "answer:price",
                "silent:NotAddressed",
                "notice",
            ],
        );
    }
}

#[test]
fn a_flood_gets_one_notice_on_every_chat_channel_and_429s_on_the_webhook() {
    let limits = Limits {
        user_per_min: 2,
        ask_per_min: Some(2),
        ..Limits::default()
    };
    for channel in [Channel::Telegram, Channel::Discord, Channel::Wecom] {
        let c = chat(limits, None);
        let flood: Vec<Inbound> = (0..5)
            .map(|i| msg(channel, &i.to_string(), "hello", false))
            .collect();
        check(
            &c,
            &flood,
            &[
                "answer:help",
                "answer:help",
                "notice",
                "silent:RateLimited",
                "silent:RateLimited",
            ],
        );
    }
    let c = chat(limits, None);
    let flood: Vec<Inbound> = (0..3)
        .map(|_| msg(Channel::Http, "", "hello", false))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let got: Vec<String> = flood
        .iter()
        .map(|m| outcome(&rt.block_on(c.handle(m))))
        .collect();
    assert_eq!(&got[..2], ["answer:help", "answer:help"]);
    let secs: u64 = got[2]
        .strip_prefix("limited:")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}", got[2]));
    assert!((1..=30).contains(&secs), "{secs}");
}

#[test]
fn the_webhook_takes_slash_text_as_a_question_and_keeps_state_only_with_an_id() {
    let c = chat(Limits::default(), None);
    check(
        &c,
        &[msg(Channel::Http, "", "/unknowncmd", false)],
        &["answer:unknown"],
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let turns = |conversation: &str| -> Vec<u32> {
        ["3090 能跑 13B 吗", "INT4 呢"]
            .iter()
            .map(|q| {
                let m = Inbound {
                    chat: conversation.into(),
                    ..msg(Channel::Http, "", q, false)
                };
                match rt.block_on(c.handle(&m)) {
                    Outcome::Answer(a) => a.state.turns,
                    other => panic!("{other:?}"),
                }
            })
            .collect()
    };
    assert_eq!(turns(""), [1, 1], "no id: every question starts afresh");
    assert_eq!(
        turns("ticket-1"),
        [1, 2],
        "an id continues the conversation"
    );
}

#[test]
fn misses_from_every_channel_reach_the_log() {
    let dir = std::env::temp_dir().join(format!("gpu-advisor-misses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("misses.jsonl");
    let _ = std::fs::remove_file(&path);
    let c = chat(Limits::default(), path.to_str());
    let all: Vec<Inbound> = Channel::ALL
        .iter()
        .map(|ch| msg(*ch, ch.id(), &format!("明天{}放假吗", ch.id()), false))
        .collect();
    check(&c, &all, &["answer:unknown"; 4]);
    c.misses.flush();
    let text = std::fs::read_to_string(&path).expect("the misses log");
    let summary = misses::summarise(&text);
    for ch in Channel::ALL {
        assert!(
            summary
                .iter()
                .any(|(q, n)| *n == 1 && *q == format!("明天{}放假吗", ch.id())),
            "{} miss not in {summary:?}",
            ch.id()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A backend that is always down.
struct Down;

impl crate::store::Store for Down {
    fn load(&self, _: &str) -> crate::store::StoreFuture<'_, Option<crate::advisor::State>> {
        down()
    }
    fn save_encoded(&self, _: &str, _: &[u8], _: Duration) -> crate::store::StoreFuture<'_, ()> {
        down()
    }
    fn first_seen(&self, _: &str, _: Duration) -> crate::store::StoreFuture<'_, bool> {
        down()
    }
    fn hit(&self, _: &str, _: Duration) -> crate::store::StoreFuture<'_, u64> {
        down()
    }
    fn setting(&self, _: &str) -> crate::store::StoreFuture<'_, Option<String>> {
        down()
    }
    fn set_setting(&self, _: &str, _: &str) -> crate::store::StoreFuture<'_, ()> {
        down()
    }
    fn reply(&self, _: &str) -> crate::store::StoreFuture<'_, Option<String>> {
        down()
    }
    fn set_reply(&self, _: &str, _: &str, _: Duration) -> crate::store::StoreFuture<'_, ()> {
        down()
    }
    fn ping(&self) -> crate::store::StoreFuture<'_, ()> {
        down()
    }
    fn name(&self) -> &'static str {
        "down"
    }
}

/// The chat layer over [`Down`], watched as `serve` watches its store.
fn chat_on_a_store_that_is_down() -> Chat {
    let metrics = Arc::new(Metrics::new());
    let store = crate::store::Observed::new(Arc::new(Down), Arc::clone(&metrics.store));
    Chat::new(
        Arc::new(Live::new(crate::data::embedded())),
        Arc::new(store),
        metrics,
        Arc::new(Misses::new(None)),
        Limits::default(),
    )
}

fn down<'a, T: Send + 'a>() -> crate::store::StoreFuture<'a, T> {
    Box::pin(async { Err(crate::store::StoreError("connection refused".into())) })
}

#[test]
fn a_store_outage_is_logged_once_not_per_request() {
    use std::io::Write;
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl Write for Lines {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines::default();
    let sink = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || sink.clone())
        .finish();
    let c = chat_on_a_store_that_is_down();
    tracing::subscriber::with_default(subscriber, || {
        let messages: Vec<Inbound> = (0..5)
            .map(|i| msg(Channel::Telegram, &i.to_string(), "T4 多少钱", false))
            .collect();
        check(&c, &messages, &["answer:price"; 5]);
    });
    let text = String::from_utf8(lines.0.lock().expect("lock").clone()).expect("utf-8");
    let loud = text
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .count();
    assert_eq!(loud, 1, "one line for the outage, not per request:\n{text}");
}

#[test]
fn a_retry_during_a_store_outage_is_still_a_duplicate() {
    let c = chat_on_a_store_that_is_down();
    check(
        &c,
        &[
            msg(Channel::Wecom, "m1", "T4 多少钱", false),
            msg(Channel::Wecom, "m1", "T4 多少钱", false),
            msg(Channel::Wecom, "m2", "T4 多少钱", false),
        ],
        &["answer:price", "silent:Duplicate", "answer:price"],
    );
}

#[test]
fn store_keys_stay_small_whatever_the_ids() {
    let long = "长".repeat(20_000);
    let m = Inbound {
        chat: long.clone(),
        message_id: long.clone(),
        ..msg(Channel::Http, "", "T4 多少钱", false)
    };
    let bound = CONVERSATION_ID_CHARS * 3 + 16;
    assert!(m.conversation_key().expect("an id").len() <= bound);
    assert!(m.delivery_key().len() <= 2 * bound);
    let chat = Inbound {
        user: long,
        ..msg(Channel::Wecom, "1", "T4 多少钱", false)
    };
    assert!(chat.conversation_key().expect("a chat").len() <= 2 * bound);
    // Short ids are kept whole: the keys replicas already share do not change.
    assert_eq!(
        msg(Channel::Telegram, "7", "x", true)
            .conversation_key()
            .as_deref(),
        Some("telegram:c1:u1")
    );
    assert_eq!(
        msg(Channel::Telegram, "7", "x", true).delivery_key(),
        "seen:telegram:c1:7"
    );
}

#[test]
fn unknown_model_names_reach_the_misses_log() {
    let dir = std::env::temp_dir().join(format!("gpu-advisor-unknown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("misses.jsonl");
    let _ = std::fs::remove_file(&path);
    let c = chat(Limits::default(), path.to_str());
    let qs = [
        msg(Channel::Http, "u1", "Kimi K2.5 推理要几张 H100", false),
        msg(Channel::Http, "u2", "Qwen3.6-27B 推理要什么卡", false),
        msg(Channel::Http, "u3", "Qwen3-32B 推理要什么卡", false),
    ];
    // Without a size the model is asked about; with one it is answered generically;
    // a catalog model is no miss.
    check(
        &c,
        &qs,
        &["answer:unknown", "answer:recommend", "answer:recommend"],
    );
    c.misses.flush();
    let text = std::fs::read_to_string(&path).expect("the misses log");
    let summary = misses::summarise(&text);
    let logged = |q: &str| summary.iter().any(|(s, _)| *s == q.to_lowercase());
    assert!(logged("Kimi K2.5 推理要几张 H100"), "{summary:?}");
    assert!(logged("Qwen3.6-27B 推理要什么卡"), "{summary:?}");
    assert!(!logged("Qwen3-32B 推理要什么卡"), "{summary:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
