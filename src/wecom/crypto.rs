//! WXBizMsgCrypt: signature, AES-256-CBC with PKCS#7/32, plaintext framing, and the
//! inbound/reply envelopes of WeCom's "接收消息与事件" callback protocol.

pub use super::error::{WecomError, MAX_BODY_BYTES};
use super::xml::{self, Element};
use aes::cipher::{block_padding::NoPadding, BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine as _};
use sha1::{Digest, Sha1};
use std::fmt;

/// PKCS#7 block size WeCom uses (32, not AES's 16).
const PAD_BLOCK: usize = 32;

type Aes256CbcEnc = cbc::Encryptor<aes::Aes256>;
type Aes256CbcDec = cbc::Decryptor<aes::Aes256>;

/// Lenient base64 decoder: WeCom's 43-character EncodingAESKey has non-zero trailing
/// bits, and some senders omit `=` padding, both of which the strict engine rejects.
const LENIENT_B64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Longest echostr plaintext accepted (Tencent's is a 19-digit number).
pub const MAX_ECHOSTR_BYTES: usize = 64;

/// An echostr plaintext: 1 to [`MAX_ECHOSTR_BYTES`] of printable ASCII, no space and no
/// markup (`<`, `>`, `&`), so that URL verification never hands back a message.
pub fn is_echostr(plain: &str) -> bool {
    (1..=MAX_ECHOSTR_BYTES).contains(&plain.len())
        && plain
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'<' | b'>' | b'&'))
}

/// A decrypted callback message. Only `msg_type` is required; the other fields
/// are filled from whatever the XML carries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InboundMessage {
    /// `ToUserName`: the corp id (empty if absent).
    pub to_user: String,
    /// `FromUserName`, or for group-robot callbacks `From/UserId` (empty if absent).
    pub from_user: String,
    /// `CreateTime` in Unix seconds (0 if absent).
    pub create_time: u64,
    /// `MsgType`, e.g. `text` or `event`.
    pub msg_type: String,
    /// `Content`, or for group-robot callbacks `Text/Content`.
    pub content: Option<String>,
    /// `MsgId`.
    pub msg_id: Option<String>,
    /// `AgentID`.
    pub agent_id: Option<String>,
    /// `ChatId` (group-robot callbacks).
    pub chat_id: Option<String>,
    /// `ChatType`, e.g. `single` or `group` (group-robot callbacks).
    pub chat_type: Option<String>,
    /// `WebhookUrl` (group-robot callbacks).
    pub webhook_url: Option<String>,
    /// `Event`, for `MsgType` `event`.
    pub event: Option<String>,
}

/// The parts of an encrypted reply envelope (`<xml><Encrypt>…<MsgSignature>…
/// <TimeStamp>…<Nonce>…</xml>`), as produced by [`WecomCrypto::encrypt_reply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyEnvelope {
    /// Base64 ciphertext.
    pub encrypt: String,
    /// Hex SHA1 signature.
    pub msg_signature: String,
    /// Timestamp as sent.
    pub timestamp: String,
    /// Nonce as sent.
    pub nonce: String,
}

/// Callback crypto for one WeCom app: its Token, EncodingAESKey and CorpID.
/// Pure: no IO except the OS random source in [`WecomCrypto::encrypt_reply`].
#[derive(Clone)]
pub struct WecomCrypto {
    token: String,
    key: [u8; 32],
    iv: [u8; 16],
    corp_id: String,
}

impl fmt::Debug for WecomCrypto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WecomCrypto")
            .field("token", &"<redacted>")
            .field("key", &"<redacted>")
            .field("corp_id", &self.corp_id)
            .finish()
    }
}

impl WecomCrypto {
    /// Builds the crypto from the app's settings. `encoding_aes_key` is the
    /// 43-character EncodingAESKey; base64 of it plus `=` must be 32 bytes, else
    /// [`WecomError::BadKey`]. The IV is the key's first 16 bytes.
    pub fn new(token: &str, encoding_aes_key: &str, corp_id: &str) -> Result<Self, WecomError> {
        let padded = format!("{}=", encoding_aes_key.trim());
        let raw = LENIENT_B64.decode(padded).map_err(|_| WecomError::BadKey)?;
        let key: [u8; 32] = raw.as_slice().try_into().map_err(|_| WecomError::BadKey)?;
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&key[..16]);
        Ok(WecomCrypto {
            token: token.to_string(),
            key,
            iv,
            corp_id: corp_id.to_string(),
        })
    }

    /// The corp id (receive id) this instance checks and appends.
    pub fn corp_id(&self) -> &str {
        &self.corp_id
    }

    /// `msg_signature`: lowercase hex SHA1 of the concatenation of token,
    /// timestamp, nonce and ciphertext after sorting them bytewise.
    pub fn signature(&self, timestamp: &str, nonce: &str, encrypt: &str) -> String {
        let mut parts = [self.token.as_str(), timestamp, nonce, encrypt];
        parts.sort_unstable();
        let mut h = Sha1::new();
        for p in parts {
            h.update(p.as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Checks `msg_signature` (hex, any case) in constant time.
    pub fn verify(
        &self,
        msg_signature: &str,
        timestamp: &str,
        nonce: &str,
        encrypt: &str,
    ) -> Result<(), WecomError> {
        let expected = self.signature(timestamp, nonce, encrypt);
        let given = msg_signature.trim().to_ascii_lowercase();
        if given.len() != expected.len() {
            return Err(WecomError::BadSignature);
        }
        let diff = given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff == 0 {
            Ok(())
        } else {
            Err(WecomError::BadSignature)
        }
    }

    /// Decrypts a base64 ciphertext to the message it frames, checking the
    /// padding, the length field and that the receive id is this corp id.
    /// Does not check any signature: call [`WecomCrypto::verify`] first.
    pub fn decrypt(&self, encrypt_b64: &str) -> Result<String, WecomError> {
        if encrypt_b64.len() > MAX_BODY_BYTES {
            return Err(WecomError::TooLarge);
        }
        let ct = LENIENT_B64
            .decode(encrypt_b64.trim())
            .map_err(|_| WecomError::BadBase64)?;
        if ct.is_empty() || ct.len() % 16 != 0 {
            return Err(WecomError::BadCiphertext);
        }
        let plain = Aes256CbcDec::new(&self.key.into(), &self.iv.into())
            .decrypt_padded_vec_mut::<NoPadding>(&ct)
            .map_err(|_| WecomError::BadCiphertext)?;
        let body = unpad(&plain)?;
        let header = body.get(16..20).ok_or(WecomError::BadLength)?;
        let mut len_be = [0u8; 4];
        len_be.copy_from_slice(header);
        let n = usize::try_from(u32::from_be_bytes(len_be)).map_err(|_| WecomError::BadLength)?;
        let msg_end = 20usize.checked_add(n).ok_or(WecomError::BadLength)?;
        let msg = body.get(20..msg_end).ok_or(WecomError::BadLength)?;
        let receive_id = body.get(msg_end..).ok_or(WecomError::BadLength)?;
        if receive_id != self.corp_id.as_bytes() {
            return Err(WecomError::WrongReceiveId);
        }
        String::from_utf8(msg.to_vec()).map_err(|_| WecomError::BadUtf8)
    }

    /// GET callback (URL verification): verifies the signature over `echostr`
    /// (already URL-decoded) and returns its plaintext, the HTTP response body, when it
    /// is shaped like an echostr ([`is_echostr`]): the route must not decrypt any signed
    /// ciphertext for whoever asks, a captured message included.
    pub fn verify_url(
        &self,
        msg_signature: &str,
        timestamp: &str,
        nonce: &str,
        echostr: &str,
    ) -> Result<String, WecomError> {
        if echostr.len() > MAX_BODY_BYTES {
            return Err(WecomError::TooLarge);
        }
        self.verify(msg_signature, timestamp, nonce, echostr)?;
        let plain = self.decrypt(echostr)?;
        if !is_echostr(&plain) {
            return Err(WecomError::NotEchostr);
        }
        Ok(plain)
    }

    /// POST callback: rejects bodies over [`MAX_BODY_BYTES`], takes `<Encrypt>`
    /// from the envelope, verifies the signature, decrypts, and parses the message.
    pub fn decrypt_message(
        &self,
        msg_signature: &str,
        timestamp: &str,
        nonce: &str,
        body_xml: &str,
    ) -> Result<InboundMessage, WecomError> {
        let plain = self.decrypt_message_xml(msg_signature, timestamp, nonce, body_xml)?;
        parse_inbound_message(&plain)
    }

    /// Like [`WecomCrypto::decrypt_message`] but returns the decrypted message XML
    /// unparsed.
    pub fn decrypt_message_xml(
        &self,
        msg_signature: &str,
        timestamp: &str,
        nonce: &str,
        body_xml: &str,
    ) -> Result<String, WecomError> {
        if body_xml.len() > MAX_BODY_BYTES {
            return Err(WecomError::TooLarge);
        }
        let root = xml::parse(body_xml)?;
        let encrypt = root
            .child_text("Encrypt")
            .ok_or(WecomError::MissingField("Encrypt"))?
            .trim();
        self.verify(msg_signature, timestamp, nonce, encrypt)?;
        self.decrypt(encrypt)
    }

    /// Encrypts a passive reply (e.g. from [`text_reply_xml`]) with a fresh random
    /// prefix and returns the full reply envelope XML to send as the HTTP body.
    /// `timestamp` must be decimal digits; `nonce` is echoed inside CDATA.
    pub fn encrypt_reply(
        &self,
        reply_xml: &str,
        timestamp: &str,
        nonce: &str,
    ) -> Result<String, WecomError> {
        let mut random16 = [0u8; 16];
        getrandom::fill(&mut random16).map_err(|e| WecomError::Random(e.to_string()))?;
        self.encrypt_reply_with_random(reply_xml, timestamp, nonce, random16)
    }

    /// [`WecomCrypto::encrypt_reply`] with a caller-chosen random prefix
    /// (deterministic; for tests). Replies over [`MAX_BODY_BYTES`] are `TooLarge`.
    pub fn encrypt_reply_with_random(
        &self,
        reply_xml: &str,
        timestamp: &str,
        nonce: &str,
        random16: [u8; 16],
    ) -> Result<String, WecomError> {
        if reply_xml.len() > MAX_BODY_BYTES {
            return Err(WecomError::TooLarge);
        }
        if timestamp.is_empty() || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
            return Err(WecomError::BadTimestamp);
        }
        let encrypt = self.encrypt_with_random(reply_xml, random16);
        let signature = self.signature(timestamp, nonce, &encrypt);
        Ok(format!(
            "<xml><Encrypt>{}</Encrypt><MsgSignature>{}</MsgSignature>\
             <TimeStamp>{timestamp}</TimeStamp><Nonce>{}</Nonce></xml>",
            xml::cdata(&encrypt),
            xml::cdata(&signature),
            xml::cdata(nonce),
        ))
    }

    /// Encrypts `plaintext` framed as `random16 || be32(len) || plaintext || corp_id`,
    /// PKCS#7-padded to 32 bytes, AES-256-CBC, base64. Deterministic given
    /// `random16`. Plaintexts of 4 GiB or more are not representable in the
    /// length field; [`WecomCrypto::encrypt_reply`] refuses anything over 64 KiB.
    pub fn encrypt_with_random(&self, plaintext: &str, random16: [u8; 16]) -> String {
        let len = u32::try_from(plaintext.len()).unwrap_or(u32::MAX);
        let mut buf = Vec::with_capacity(20 + plaintext.len() + self.corp_id.len() + PAD_BLOCK);
        buf.extend_from_slice(&random16);
        buf.extend_from_slice(&len.to_be_bytes());
        buf.extend_from_slice(plaintext.as_bytes());
        buf.extend_from_slice(self.corp_id.as_bytes());
        pad(&mut buf);
        self.encrypt_blocks(&buf)
    }

    /// AES-256-CBC over `aligned` as it is (no framing, no padding), base64; None
    /// unless it is a non-empty whole number of 16-byte blocks. For tests that need a
    /// correctly encrypted but badly framed or padded ciphertext.
    pub fn encrypt_unframed(&self, aligned: &[u8]) -> Option<String> {
        (!aligned.is_empty() && aligned.len() % 16 == 0).then(|| self.encrypt_blocks(aligned))
    }

    /// AES-256-CBC over already block-aligned data, then base64.
    fn encrypt_blocks(&self, aligned: &[u8]) -> String {
        let ct = Aes256CbcEnc::new(&self.key.into(), &self.iv.into())
            .encrypt_padded_vec_mut::<NoPadding>(aligned);
        STANDARD.encode(ct)
    }
}

/// Appends PKCS#7 padding to a multiple of 32 bytes (always 1..=32 bytes).
fn pad(buf: &mut Vec<u8>) {
    let n = PAD_BLOCK - buf.len() % PAD_BLOCK;
    // n is in 1..=32, so it fits a byte.
    buf.resize(buf.len() + n, n as u8);
}

/// Strips PKCS#7 padding with block size 32: the pad byte must be 1..=32, no longer
/// than the data, and every pad byte must equal it.
fn unpad(data: &[u8]) -> Result<&[u8], WecomError> {
    let &last = data.last().ok_or(WecomError::BadPadding)?;
    let n = usize::from(last);
    if n == 0 || n > PAD_BLOCK || n > data.len() {
        return Err(WecomError::BadPadding);
    }
    let split = data.len() - n;
    let (body, padding) = data.split_at(split);
    if padding.iter().any(|&b| b != last) {
        return Err(WecomError::BadPadding);
    }
    Ok(body)
}

/// Parses decrypted message XML into an [`InboundMessage`]. `MsgType` is
/// required; `CreateTime`, when present, must be an unsigned integer. Falls back
/// to `From/UserId` and `Text/Content` for group-robot callbacks.
pub fn parse_inbound_message(message_xml: &str) -> Result<InboundMessage, WecomError> {
    if message_xml.len() > MAX_BODY_BYTES {
        return Err(WecomError::TooLarge);
    }
    let root = xml::parse(message_xml)?;
    let opt = |name: &str| root.child_text(name).map(|s| s.trim().to_string());
    let nested = |outer: &str, inner: &str| {
        root.child(outer)
            .and_then(|e: &Element| e.child_text(inner))
            .map(|s| s.trim().to_string())
    };
    let msg_type = opt("MsgType").ok_or(WecomError::MissingField("MsgType"))?;
    let create_time = match opt("CreateTime") {
        None => 0,
        Some(t) => t
            .parse::<u64>()
            .map_err(|_| WecomError::BadXml(format!("CreateTime is not a number: {t:?}")))?,
    };
    let content = root.child_text("Content").map(str::to_string).or_else(|| {
        root.child("Text")
            .and_then(|t| t.child_text("Content"))
            .map(str::to_string)
    });
    Ok(InboundMessage {
        to_user: opt("ToUserName").unwrap_or_default(),
        from_user: opt("FromUserName")
            .or_else(|| nested("From", "UserId"))
            .unwrap_or_default(),
        create_time,
        msg_type,
        content,
        msg_id: opt("MsgId"),
        agent_id: opt("AgentID"),
        chat_id: opt("ChatId"),
        chat_type: opt("ChatType"),
        webhook_url: opt("WebhookUrl"),
        event: opt("Event"),
    })
}

/// Parses a reply envelope as produced by [`WecomCrypto::encrypt_reply`] (useful
/// for tests and for checking what is about to be sent).
pub fn parse_reply_envelope(envelope_xml: &str) -> Result<ReplyEnvelope, WecomError> {
    if envelope_xml.len() > MAX_BODY_BYTES {
        return Err(WecomError::TooLarge);
    }
    let root = xml::parse(envelope_xml)?;
    let get = |name: &'static str| {
        root.child_text(name)
            .map(|s| s.trim().to_string())
            .ok_or(WecomError::MissingField(name))
    };
    Ok(ReplyEnvelope {
        encrypt: get("Encrypt")?,
        msg_signature: get("MsgSignature")?,
        timestamp: get("TimeStamp")?,
        nonce: get("Nonce")?,
    })
}

/// The passive text reply XML, to pass to [`WecomCrypto::encrypt_reply`]:
/// `to_user` is the sender's user id, `from_user` the corp id. `]]>` in any
/// field is split so it cannot break out of its CDATA section.
pub fn text_reply_xml(to_user: &str, from_user: &str, create_time: u64, content: &str) -> String {
    format!(
        "<xml><ToUserName>{}</ToUserName><FromUserName>{}</FromUserName>\
         <CreateTime>{create_time}</CreateTime><MsgType>{}</MsgType>\
         <Content>{}</Content></xml>",
        xml::cdata(to_user),
        xml::cdata(from_user),
        xml::cdata("text"),
        xml::cdata(content),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Tencent's published sample vectors, shared with the integration tests and the
    // fuzz targets.
    #[allow(dead_code)]
    mod vectors {
        include!("../../tests/support/wecom_vectors.rs");
    }
    use vectors::*;

    fn official() -> WecomCrypto {
        WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).unwrap()
    }

    fn sample_body() -> String {
        format!(
            "<xml><ToUserName><![CDATA[ww1436e0e65a779aee]]></ToUserName>\n\
             <Encrypt><![CDATA[{MSG_ENCRYPT}]]></Encrypt>\n\
             <AgentID><![CDATA[1000002]]></AgentID>\n</xml>"
        )
    }

    /// Tiny fixed-seed xorshift64* for the no-panic sweeps.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    #[test]
    fn key_must_be_32_bytes() {
        assert!(WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).is_ok());
        assert_eq!(
            WecomCrypto::new(TOKEN, "short", CORP_ID).unwrap_err(),
            WecomError::BadKey
        );
        assert_eq!(
            WecomCrypto::new(TOKEN, "", CORP_ID).unwrap_err(),
            WecomError::BadKey
        );
        assert_eq!(
            WecomCrypto::new(TOKEN, &format!("{AES_KEY}AAAA"), CORP_ID).unwrap_err(),
            WecomError::BadKey
        );
        assert_eq!(
            WecomCrypto::new(
                TOKEN,
                "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
                CORP_ID
            )
            .unwrap_err(),
            WecomError::BadKey
        );
        let dbg = format!("{:?}", official());
        assert!(!dbg.contains(TOKEN) && dbg.contains(CORP_ID));
    }

    #[test]
    fn official_url_verification() {
        let c = official();
        assert_eq!(c.signature(URL_TS, URL_NONCE, URL_ECHOSTR), URL_SIG);
        assert_eq!(
            c.verify_url(URL_SIG, URL_TS, URL_NONCE, URL_ECHOSTR)
                .unwrap(),
            "1288432023552776189"
        );
        assert_eq!(
            c.verify_url(
                &URL_SIG.to_ascii_uppercase(),
                URL_TS,
                URL_NONCE,
                URL_ECHOSTR
            )
            .unwrap(),
            "1288432023552776189"
        );
    }

    #[test]
    fn url_verification_returns_tokens_only() {
        let c = official();
        for plain in [
            "<xml><Content><![CDATA[hi]]></Content></xml>",
            "",
            "two words",
            "line\n",
            &"9".repeat(MAX_ECHOSTR_BYTES + 1),
            "a&b",
            "中文",
        ] {
            let echo = c.encrypt_with_random(plain, [3; 16]);
            let sig = c.signature("1", "2", &echo);
            assert_eq!(
                c.verify_url(&sig, "1", "2", &echo).unwrap_err(),
                WecomError::NotEchostr,
                "{plain:?}"
            );
        }
        let echo = c.encrypt_with_random("abc-123_XYZ", [3; 16]);
        let sig = c.signature("1", "2", &echo);
        assert_eq!(c.verify_url(&sig, "1", "2", &echo).unwrap(), "abc-123_XYZ");
        // The published message ciphertext, correctly signed as an echostr.
        let sig = c.signature(MSG_TS, MSG_NONCE, MSG_ENCRYPT);
        assert_eq!(
            c.verify_url(&sig, MSG_TS, MSG_NONCE, MSG_ENCRYPT)
                .unwrap_err(),
            WecomError::NotEchostr
        );
    }

    #[test]
    fn official_message_decryption() {
        let c = official();
        assert_eq!(c.signature(MSG_TS, MSG_NONCE, MSG_ENCRYPT), MSG_SIG);
        let plain = c
            .decrypt_message_xml(MSG_SIG, MSG_TS, MSG_NONCE, &sample_body())
            .unwrap();
        assert_eq!(
            plain,
            "<xml><ToUserName>ww1436e0e65a779aee</ToUserName><FromUserName>ChenJiaShun\
             </FromUserName><CreateTime>1476422779</CreateTime><MsgType>text</MsgType>\
             <Content>你好</Content><MsgId>1456453720</MsgId><AgentID>1000002</AgentID></xml>"
        );
        let m = c
            .decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, &sample_body())
            .unwrap();
        assert_eq!(
            m,
            InboundMessage {
                to_user: CORP_ID.into(),
                from_user: "ChenJiaShun".into(),
                create_time: 1476422779,
                msg_type: "text".into(),
                content: Some("你好".into()),
                msg_id: Some("1456453720".into()),
                agent_id: Some("1000002".into()),
                ..InboundMessage::default()
            }
        );
    }

    #[test]
    fn round_trip_encrypt_decrypt() {
        let c = official();
        for msg in [
            "",
            "a",
            "你好",
            &"x".repeat(31),
            &"y".repeat(32),
            &"z".repeat(1000),
        ] {
            let enc = c.encrypt_with_random(msg, [7u8; 16]);
            assert_eq!(enc, c.encrypt_with_random(msg, [7u8; 16]));
            assert_ne!(enc, c.encrypt_with_random(msg, [8u8; 16]));
            let ct = STANDARD.decode(&enc).unwrap();
            assert_eq!(ct.len() % PAD_BLOCK, 0);
            assert_eq!(c.decrypt(&enc).unwrap(), msg);
        }
    }

    #[test]
    fn round_trip_reply_envelope() {
        let c = official();
        let reply = text_reply_xml("ChenJiaShun", CORP_ID, 1476422779, "答案 ]]> <b>&</b>");
        let env_xml = c.encrypt_reply(&reply, "1476422779", "n]]>once").unwrap();
        assert!(env_xml.starts_with("<xml><Encrypt><![CDATA["));
        assert!(env_xml.contains("<TimeStamp>1476422779</TimeStamp>"));
        let env = parse_reply_envelope(&env_xml).unwrap();
        assert_eq!(env.timestamp, "1476422779");
        assert_eq!(env.nonce, "n]]>once");
        c.verify(&env.msg_signature, &env.timestamp, &env.nonce, &env.encrypt)
            .unwrap();
        let back = c.decrypt(&env.encrypt).unwrap();
        assert_eq!(back, reply);
        let parsed = parse_inbound_message(&back).unwrap();
        assert_eq!(parsed.to_user, "ChenJiaShun");
        assert_eq!(parsed.from_user, CORP_ID);
        assert_eq!(parsed.msg_type, "text");
        assert_eq!(parsed.create_time, 1476422779);
        assert_eq!(parsed.content.as_deref(), Some("答案 ]]> <b>&</b>"));
        // Two replies differ by their random prefix.
        assert_ne!(
            env_xml,
            c.encrypt_reply(&reply, "1476422779", "n]]>once").unwrap()
        );
        assert_eq!(
            c.encrypt_reply(&reply, "12a", "n").unwrap_err(),
            WecomError::BadTimestamp
        );
        assert_eq!(
            c.encrypt_reply(&"x".repeat(MAX_BODY_BYTES + 1), "1", "n")
                .unwrap_err(),
            WecomError::TooLarge
        );
    }

    #[test]
    fn text_reply_xml_shape() {
        assert_eq!(
            text_reply_xml("user", "corp", 12, "a]]>b"),
            "<xml><ToUserName><![CDATA[user]]></ToUserName><FromUserName><![CDATA[corp]]>\
             </FromUserName><CreateTime>12</CreateTime><MsgType><![CDATA[text]]></MsgType>\
             <Content><![CDATA[a]]]]><![CDATA[>b]]></Content></xml>"
        );
    }

    #[test]
    fn group_robot_fields() {
        let xml = "<xml><WebhookUrl><![CDATA[https://qyapi.weixin.qq.com/x?key=k]]></WebhookUrl>\
                   <ChatId><![CDATA[wrkSFfCgAAx]]></ChatId><ChatType>group</ChatType>\
                   <From><UserId>zhangsan</UserId><Name>张三</Name></From>\
                   <MsgType>text</MsgType><Text><Content><![CDATA[@bot hi]]></Content></Text>\
                   <MsgId>abc</MsgId></xml>";
        let m = parse_inbound_message(xml).unwrap();
        assert_eq!(
            m.webhook_url.as_deref(),
            Some("https://qyapi.weixin.qq.com/x?key=k")
        );
        assert_eq!(m.chat_id.as_deref(), Some("wrkSFfCgAAx"));
        assert_eq!(m.chat_type.as_deref(), Some("group"));
        assert_eq!(m.from_user, "zhangsan");
        assert_eq!(m.content.as_deref(), Some("@bot hi"));
        assert_eq!(m.create_time, 0);
        assert_eq!(
            parse_inbound_message("<xml><Content>x</Content></xml>").unwrap_err(),
            WecomError::MissingField("MsgType")
        );
        assert!(matches!(
            parse_inbound_message("<xml><MsgType>text</MsgType><CreateTime>x</CreateTime></xml>"),
            Err(WecomError::BadXml(_))
        ));
    }

    #[test]
    fn bad_signature() {
        let c = official();
        let wrong = "0c3914025cb4b4d68103f6bfc8db550f79dcf48f";
        assert_eq!(
            c.decrypt_message(wrong, MSG_TS, MSG_NONCE, &sample_body())
                .unwrap_err(),
            WecomError::BadSignature
        );
        assert_eq!(
            c.decrypt_message(MSG_SIG, "1476422780", MSG_NONCE, &sample_body())
                .unwrap_err(),
            WecomError::BadSignature
        );
        assert_eq!(
            c.verify_url("", URL_TS, URL_NONCE, URL_ECHOSTR)
                .unwrap_err(),
            WecomError::BadSignature
        );
        assert_eq!(
            c.verify_url(&URL_SIG[..39], URL_TS, URL_NONCE, URL_ECHOSTR)
                .unwrap_err(),
            WecomError::BadSignature
        );
        let other_token = WecomCrypto::new("other", AES_KEY, CORP_ID).unwrap();
        assert_eq!(
            other_token
                .verify_url(URL_SIG, URL_TS, URL_NONCE, URL_ECHOSTR)
                .unwrap_err(),
            WecomError::BadSignature
        );
    }

    #[test]
    fn wrong_receive_id() {
        let c = official();
        let other = WecomCrypto::new(TOKEN, AES_KEY, "wwotherotherother1").unwrap();
        let enc = other.encrypt_with_random("<xml/>", [1u8; 16]);
        assert_eq!(c.decrypt(&enc).unwrap_err(), WecomError::WrongReceiveId);
        // A corp id that is a prefix of ours must not pass either.
        let prefix = WecomCrypto::new(TOKEN, AES_KEY, "ww1436e0e65a779ae").unwrap();
        assert_eq!(
            prefix
                .decrypt(&c.encrypt_with_random("m", [0; 16]))
                .unwrap_err(),
            WecomError::WrongReceiveId
        );
        let env = other.encrypt_reply("<xml/>", "1", "n").unwrap();
        let env = parse_reply_envelope(&env).unwrap();
        let body = format!("<xml><Encrypt><![CDATA[{}]]></Encrypt></xml>", env.encrypt);
        assert_eq!(
            c.decrypt_message(&env.msg_signature, "1", "n", &body)
                .unwrap_err(),
            WecomError::WrongReceiveId
        );
    }

    #[test]
    fn bad_base64_and_truncation() {
        let c = official();
        assert_eq!(
            c.decrypt("!!!not base64!!!").unwrap_err(),
            WecomError::BadBase64
        );
        assert_eq!(c.decrypt("a").unwrap_err(), WecomError::BadBase64);
        assert_eq!(c.decrypt("ab=c").unwrap_err(), WecomError::BadBase64);
        assert_eq!(
            c.decrypt(&format!("{MSG_ENCRYPT}=")).unwrap_err(),
            WecomError::BadBase64
        );
        // Unpadded but otherwise valid base64 decodes (then fails as too short).
        assert_eq!(c.decrypt("abc").unwrap_err(), WecomError::BadCiphertext);
        assert_eq!(c.decrypt("").unwrap_err(), WecomError::BadCiphertext);
        let ct = STANDARD.decode(MSG_ENCRYPT).unwrap();
        for cut in [1, 15, 17, ct.len() - 1] {
            let t = STANDARD.encode(&ct[..cut]);
            assert_eq!(
                c.decrypt(&t).unwrap_err(),
                WecomError::BadCiphertext,
                "cut {cut}"
            );
        }
        // Dropping whole blocks leaves a ciphertext whose last block still decrypts,
        // but the framing no longer holds.
        let t = STANDARD.encode(&ct[..ct.len() - 16]);
        assert!(c.decrypt(&t).is_err());
    }

    #[test]
    fn bad_padding() {
        let c = official();
        let mut framed = Vec::new();
        framed.extend_from_slice(&[0u8; 16]);
        framed.extend_from_slice(&2u32.to_be_bytes());
        framed.extend_from_slice(b"hi");
        framed.extend_from_slice(CORP_ID.as_bytes());
        // 40 bytes so far; pad to 64 by hand with various bad paddings.
        let fill = 64 - framed.len();
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for last in [0u8, 33, 200] {
            let mut v = framed.clone();
            v.resize(63, last);
            v.push(last);
            cases.push(v);
        }
        let mut inconsistent = framed.clone();
        inconsistent.resize(64, fill as u8);
        inconsistent[50] ^= 1;
        cases.push(inconsistent);
        for (i, v) in cases.iter().enumerate() {
            assert_eq!(v.len(), 64);
            assert_eq!(
                c.decrypt(&c.encrypt_blocks(v)).unwrap_err(),
                WecomError::BadPadding,
                "{i}"
            );
        }
        // The good padding of the same frame decrypts.
        let mut good = framed.clone();
        good.resize(64, fill as u8);
        assert_eq!(c.decrypt(&c.encrypt_blocks(&good)).unwrap(), "hi");
        // Pad of 32 covering all of a 32-byte plaintext leaves a too-short frame.
        assert_eq!(
            c.decrypt(&c.encrypt_blocks(&[32u8; 32])).unwrap_err(),
            WecomError::BadLength
        );
        // A lone 16-byte block: all padding leaves nothing; a longer pad than the data fails.
        assert_eq!(
            c.decrypt(&c.encrypt_blocks(&[16u8; 16])).unwrap_err(),
            WecomError::BadLength
        );
        assert_eq!(
            c.decrypt(&c.encrypt_blocks(&[17u8; 16])).unwrap_err(),
            WecomError::BadPadding
        );
        assert_eq!(
            c.decrypt(&c.encrypt_blocks(&[40u8; 16])).unwrap_err(),
            WecomError::BadPadding
        );
        assert_eq!(unpad(&[]).unwrap_err(), WecomError::BadPadding);
        assert_eq!(unpad(&[3, 3]).unwrap_err(), WecomError::BadPadding);
    }

    #[test]
    fn length_field_past_end() {
        let c = official();
        for n in [u32::MAX, 1000, 2 + CORP_ID.len() as u32 + 1] {
            let mut framed = Vec::new();
            framed.extend_from_slice(&[9u8; 16]);
            framed.extend_from_slice(&n.to_be_bytes());
            framed.extend_from_slice(b"hi");
            framed.extend_from_slice(CORP_ID.as_bytes());
            pad(&mut framed);
            assert_eq!(
                c.decrypt(&c.encrypt_blocks(&framed)).unwrap_err(),
                WecomError::BadLength,
                "n={n}"
            );
        }
        // Non-UTF-8 message bytes.
        let mut framed = vec![0u8; 16];
        framed.extend_from_slice(&2u32.to_be_bytes());
        framed.extend_from_slice(&[0xff, 0xfe]);
        framed.extend_from_slice(CORP_ID.as_bytes());
        pad(&mut framed);
        assert_eq!(
            c.decrypt(&c.encrypt_blocks(&framed)).unwrap_err(),
            WecomError::BadUtf8
        );
    }

    #[test]
    fn malformed_and_missing_and_oversize_bodies() {
        let c = official();
        for body in [
            "",
            "not xml",
            "<xml><Encrypt>abc</xml>",
            "<xml><Encrypt><![CDATA[abc</Encrypt></xml>",
            "<xml><Encrypt>a</Encrypt>",
        ] {
            assert!(
                matches!(
                    c.decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, body),
                    Err(WecomError::BadXml(_))
                ),
                "{body:?}"
            );
        }
        assert_eq!(
            c.decrypt_message(
                MSG_SIG,
                MSG_TS,
                MSG_NONCE,
                "<xml><ToUserName>x</ToUserName></xml>"
            )
            .unwrap_err(),
            WecomError::MissingField("Encrypt")
        );
        let big = format!(
            "<xml><Encrypt>{}</Encrypt></xml>",
            "a".repeat(MAX_BODY_BYTES)
        );
        assert_eq!(
            c.decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, &big)
                .unwrap_err(),
            WecomError::TooLarge
        );
        // Oversize wins even over garbage that would not parse.
        let junk = "<".repeat(MAX_BODY_BYTES + 1);
        assert_eq!(
            c.decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, &junk)
                .unwrap_err(),
            WecomError::TooLarge
        );
        assert_eq!(
            c.decrypt(&"A".repeat(MAX_BODY_BYTES + 4)).unwrap_err(),
            WecomError::TooLarge
        );
        assert_eq!(
            c.verify_url(URL_SIG, URL_TS, URL_NONCE, &"A".repeat(MAX_BODY_BYTES + 4))
                .unwrap_err(),
            WecomError::TooLarge
        );
        // A validly signed envelope whose plaintext is not a message.
        let enc = c.encrypt_with_random("not xml at all", [3; 16]);
        let sig = c.signature("1", "n", &enc);
        let body = format!("<xml><Encrypt><![CDATA[{enc}]]></Encrypt></xml>");
        assert!(matches!(
            c.decrypt_message(&sig, "1", "n", &body),
            Err(WecomError::BadXml(_))
        ));
        assert_eq!(
            parse_reply_envelope("<xml><Encrypt>a</Encrypt></xml>").unwrap_err(),
            WecomError::MissingField("MsgSignature")
        );
    }

    #[test]
    fn random_inputs_never_panic() {
        let c = official();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let b64 = STANDARD.decode(MSG_ENCRYPT).unwrap();
        let pieces = [
            "<xml>",
            "</xml>",
            "<Encrypt>",
            "</Encrypt>",
            "<![CDATA[",
            "]]>",
            "<!--",
            "-->",
            "<?",
            "?>",
            "&",
            "&amp;",
            "&#x",
            ";",
            "<",
            ">",
            "/",
            "=",
            "\"",
            "'",
            " ",
            "\n",
            "MsgType",
            "a",
            "你",
            "\u{feff}",
        ];
        for i in 0..3000 {
            // Raw random bytes, lossily made into text.
            let n = rng.below(200);
            let raw = rng.bytes(n);
            let s = String::from_utf8_lossy(&raw).into_owned();
            let _ = c.decrypt(&s);
            let _ = c.decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, &s);
            let _ = c.verify_url(&s, MSG_TS, MSG_NONCE, &s);
            let _ = parse_inbound_message(&s);

            // Valid base64 of random bytes: exercises AES, padding and framing.
            let ct = if i % 2 == 0 {
                let blocks = rng.below(8);
                rng.bytes(16 * blocks)
            } else {
                // Flip a byte of the official ciphertext.
                let mut v = b64.clone();
                let at = rng.below(v.len());
                v[at] ^= (rng.next() as u8) | 1;
                v
            };
            let enc = STANDARD.encode(&ct);
            let _ = c.decrypt(&enc);
            let sig = c.signature(MSG_TS, MSG_NONCE, &enc);
            let body = format!("<xml><Encrypt><![CDATA[{enc}]]></Encrypt></xml>");
            let _ = c.decrypt_message(&sig, MSG_TS, MSG_NONCE, &body);

            // Random framing under a valid padding: length field and receive id fuzz.
            let n = rng.below(80);
            let mut framed = rng.bytes(n);
            pad(&mut framed);
            let _ = c.decrypt(&c.encrypt_blocks(&framed));

            // Random XML-ish token soup, signed, so it reaches the message parser.
            let n = rng.below(40);
            let soup: String = (0..n).map(|_| pieces[rng.below(pieces.len())]).collect();
            let _ = parse_inbound_message(&soup);
            let _ = c.decrypt_message(MSG_SIG, MSG_TS, MSG_NONCE, &soup);
            let enc = c.encrypt_with_random(&soup, [0; 16]);
            let sig = c.signature(MSG_TS, MSG_NONCE, &enc);
            let body = format!("<xml><Encrypt>{enc}</Encrypt></xml>");
            let _ = c.decrypt_message(&sig, MSG_TS, MSG_NONCE, &body);
        }
    }
}
