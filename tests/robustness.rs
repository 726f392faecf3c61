//! The properties the fuzz targets in `fuzz/` check, as proptests that run in
//! `cargo test`: WeCom's envelope and message decoding, `POST /v1/ask` through the
//! real router, and a Telegram update's path to its reply, on arbitrary input. (The
//! question parser's are in properties.rs.)

use axum::http::StatusCode;
use base64::Engine;
use gpu_advisor::advisor::Advisor;
use gpu_advisor::config::Settings;
use gpu_advisor::render::TELEGRAM_MAX_CHARS;
use gpu_advisor::server::InProcess;
use gpu_advisor::telegram::offline::reply_parts;
use gpu_advisor::wecom::{parse_inbound_message, WecomCrypto, WecomError};
use proptest::prelude::*;
use std::sync::OnceLock;

use crate::support::wecom_vectors::{AES_KEY, CORP_ID, MSG_NONCE as NONCE, MSG_TS as TS, TOKEN};

fn crypto() -> &'static WecomCrypto {
    static C: OnceLock<WecomCrypto> = OnceLock::new();
    C.get_or_init(|| WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("sample key"))
}

fn envelope(encrypt: &str) -> String {
    format!("<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName><Encrypt><![CDATA[{encrypt}]]></Encrypt></xml>")
}

fn post(body: Vec<u8>) -> (StatusCode, serde_json::Value) {
    static ROUTER: OnceLock<InProcess> = OnceLock::new();
    let router = ROUTER.get_or_init(|| InProcess::new(Settings::default()).expect("app"));
    let (status, bytes) = router.post_json("/v1/ask", body);
    let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    (status, json)
}

/// Text that looks like a message: XML-ish fragments mixed with anything.
fn xmlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<xml>".to_string()),
        Just("</xml>".to_string()),
        Just("<Content><![CDATA[".to_string()),
        Just("]]></Content>".to_string()),
        Just("<MsgType>text</MsgType>".to_string()),
        Just("<FromUserName>u</FromUserName>".to_string()),
        Just("<CreateTime>99999999999999999999</CreateTime>".to_string()),
        Just("&amp;&#x10FFFF;&#0;&bogus;".to_string()),
        Just("<!--".to_string()),
        ".{0,12}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_envelope_is_rejected_or_decoded_without_panic(body in xmlish()) {
        let _ = crypto().decrypt_message("0c3914025cb4b4d68103f6bfc8db550f79dcf48e", TS, NONCE, &body);
        let _ = crypto().decrypt(&body);
    }

    #[test]
    fn signed_garbage_ciphertext_is_an_error_not_a_panic(data in prop::collection::vec(any::<u8>(), 0..400)) {
        let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
        let sig = crypto().signature(TS, NONCE, &b64);
        // Past the signature, random bytes fail the AES framing: block size, PKCS#7
        // padding, length field or corp id (a random match is a 2^-100 event).
        let r = crypto().decrypt_message(&sig, TS, NONCE, &envelope(&b64));
        prop_assert!(matches!(r, Err(WecomError::BadBase64 | WecomError::BadCiphertext | WecomError::BadPadding | WecomError::BadLength | WecomError::BadUtf8 | WecomError::WrongReceiveId | WecomError::MissingField(_))), "{:?}", r.map(|m| m.content));
    }

    #[test]
    fn our_encryption_round_trips_any_message(text in xmlish(), random in any::<[u8; 16]>()) {
        let encrypt = crypto().encrypt_with_random(&text, random);
        let sig = crypto().signature(TS, NONCE, &encrypt);
        let plain = crypto().decrypt_message_xml(&sig, TS, NONCE, &envelope(&encrypt));
        prop_assert_eq!(plain.as_deref(), Ok(text.as_str()));
        // A message parser that sees the same text either parses it or says why.
        let _ = parse_inbound_message(&text);
    }

    #[test]
    fn a_tampered_ciphertext_fails_the_signature(text in ".{1,80}", flip in 0usize..64) {
        // CBC alone is malleable; the signature over the ciphertext is what rejects it.
        let encrypt = crypto().encrypt_with_random(&text, [1; 16]);
        let sig = crypto().signature(TS, NONCE, &encrypt);
        let mut bytes = encrypt.into_bytes();
        let i = flip % bytes.len();
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).expect("base64 is ASCII");
        let r = crypto().decrypt_message(&sig, TS, NONCE, &envelope(&tampered));
        prop_assert!(matches!(r, Err(WecomError::BadSignature)), "{:?}", r.map(|m| m.content));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_ask_body_gets_json_and_a_4xx_or_an_answer(body in prop::collection::vec(any::<u8>(), 0..300)) {
        let (status, json) = post(body);
        match status.as_u16() {
            200 => prop_assert!(json["reply"].is_string()),
            400 | 413 => prop_assert!(json["error"]["code"].is_string(), "{}", json),
            other => prop_assert!(false, "status {other}: {json}"),
        }
    }

    #[test]
    fn any_text_in_a_well_formed_request_is_answered(text in ".{0,200}", conv in "[a-z0-9]{0,8}") {
        let body = serde_json::json!({ "text": text, "conversation": conv });
        let (status, json) = post(body.to_string().into_bytes());
        prop_assert_eq!(status, StatusCode::OK, "{}", json);
        prop_assert!(json["reply"].as_str().is_some_and(|r| !r.is_empty()));
    }

    #[test]
    fn json_with_wrong_field_types_is_a_400_with_a_path(v in prop_oneof![
        Just(serde_json::json!({"text": 1})),
        Just(serde_json::json!({"text": null})),
        Just(serde_json::json!({"text": ["a"]})),
        Just(serde_json::json!({"text": "a", "conversation": 5})),
        Just(serde_json::json!([])),
    ]) {
        let (status, json) = post(v.to_string().into_bytes());
        prop_assert_eq!(status, StatusCode::BAD_REQUEST);
        prop_assert!(json["error"]["message"].is_string());
    }
}

fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(gpu_advisor::data::embedded)
}

/// The `telegram_update` fuzz target's check: no panic; an answer is one or more
/// non-empty messages within Telegram's limit.
fn telegram_reply(json: &[u8]) -> Result<Option<Vec<String>>, TestCaseError> {
    let Ok(Some(parts)) = reply_parts(advisor(), "gpu_advisor_bot", 123, json) else {
        return Ok(None);
    };
    prop_assert!(!parts.is_empty());
    for p in &parts {
        prop_assert!(!p.trim().is_empty());
        prop_assert!(p.chars().count() <= TELEGRAM_MAX_CHARS);
    }
    Ok(Some(parts))
}

/// Message text with what makes entity offsets hard: surrogate pairs, CJK, mentions.
fn chat_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("😀".to_string()),
        Just("👨‍👩‍👧".to_string()),
        Just("@gpu_advisor_bot".to_string()),
        Just("/price".to_string()),
        Just("4090 能跑 70B 吗".to_string()),
        Just(" ".to_string()),
        Just("<b>&amp;</b>".to_string()),
        ".{0,6}",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

/// An entity with any offset and length: inside a surrogate pair, past the end, huge.
fn entity() -> impl Strategy<Value = serde_json::Value> {
    let n = prop_oneof![0usize..40, Just(usize::MAX), Just(u32::MAX as usize)];
    let kind = prop_oneof![
        Just("mention"),
        Just("bold"),
        Just("bot_command"),
        Just("text_link"),
        Just("pre"),
    ];
    (kind, n.clone(), n).prop_map(|(kind, offset, length)| {
        serde_json::json!({"type": kind, "offset": offset, "length": length, "url": "https://x.test"})
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_update_json_is_answered_or_ignored_without_panic(body in prop::collection::vec(any::<u8>(), 0..300)) {
        telegram_reply(&body)?;
    }

    #[test]
    fn any_entity_offsets_are_survived(
        text in chat_text(),
        entities in prop::collection::vec(entity(), 0..6),
        caption in any::<bool>(),
        group in any::<bool>(),
    ) {
        let chat = if group {
            serde_json::json!({"id": -100, "type": "supergroup", "title": "g"})
        } else {
            serde_json::json!({"id": 42, "type": "private", "first_name": "Li"})
        };
        let mut message = serde_json::json!({
            "message_id": 1, "date": 1_700_000_000, "chat": chat,
            "from": {"id": 42, "is_bot": false, "first_name": "Li"},
        });
        if caption {
            message["photo"] = serde_json::json!([{"file_id": "f", "file_unique_id": "u", "width": 1, "height": 1}]);
            message["caption"] = serde_json::json!(text);
            message["caption_entities"] = serde_json::json!(entities);
        } else {
            message["text"] = serde_json::json!(text);
            message["entities"] = serde_json::json!(entities);
        }
        let update = serde_json::json!({"update_id": 1, "message": message});
        let parts = telegram_reply(update.to_string().as_bytes())?;
        if !group && !text.trim().is_empty() && !text.trim_start().starts_with('/') {
            prop_assert!(parts.is_some(), "a private question got no answer: {}", update);
        }
    }
}
