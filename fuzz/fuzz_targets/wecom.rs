//! WeCom's callback decoding: the XML envelope, signature check, base64, AES-CBC,
//! padding, length field and corp id, and the decrypted message's XML. Uses the keys of
//! Tencent's published samples.
#![no_main]

use base64::Engine;
use gpu_advisor::wecom::{parse_inbound_message, WecomCrypto, MAX_BODY_BYTES};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[allow(dead_code)]
#[path = "../../tests/support/wecom_vectors.rs"]
mod vectors;
use vectors::{AES_KEY, CORP_ID, TOKEN};

fn crypto() -> &'static WecomCrypto {
    static C: OnceLock<WecomCrypto> = OnceLock::new();
    C.get_or_init(|| WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("sample key"))
}

fuzz_target!(|data: &[u8]| {
    let c = crypto();
    let text = String::from_utf8_lossy(data);
    let (ts, nonce) = ("1476422779", "1597212914");

    // 1. The raw body as an envelope, with a signature over whatever it carries.
    let _ = c.decrypt_message("0c3914025cb4b4d68103f6bfc8db550f79dcf48e", ts, nonce, &text);

    // 2. The bytes as ciphertext, correctly signed: base64, AES, padding and the
    //    length/corp-id framing see arbitrary data.
    let b64 = base64::engine::general_purpose::STANDARD.encode(data);
    let envelope = format!("<xml><Encrypt><![CDATA[{b64}]]></Encrypt></xml>");
    let sig = c.signature(ts, nonce, &b64);
    let _ = c.decrypt_message(&sig, ts, nonce, &envelope);
    let _ = c.decrypt(&text);

    // 3. The text as the decrypted message: our own encryption round-trips it exactly,
    //    and the message parser sees arbitrary XML.
    let encrypt = c.encrypt_with_random(&text, [7; 16]);
    let sig = c.signature(ts, nonce, &encrypt);
    let envelope = format!("<xml><Encrypt><![CDATA[{encrypt}]]></Encrypt></xml>");
    if envelope.len() <= MAX_BODY_BYTES {
        let plain = c
            .decrypt_message_xml(&sig, ts, nonce, &envelope)
            .expect("our own envelope decrypts");
        assert_eq!(plain, text, "round trip");
    }
    if let Ok(m) = parse_inbound_message(&text) {
        assert!(m.from_user.len() <= text.len());
    }
});
