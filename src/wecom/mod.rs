//! The WeCom (企业微信) adapter: the callback route (`callback`), the group robot push
//! (`robot`), and the callback crypto — WXBizMsgCrypt for "接收消息与事件" (`crypto`, `xml`).
//!
//! Pure: no IO, no clock, no global state (the only system call is the OS random
//! source, used by [`WecomCrypto::encrypt_reply`] for the 16-byte prefix; use
//! [`WecomCrypto::encrypt_reply_with_random`] to stay deterministic).
//!
//! * GET (URL verification): [`WecomCrypto::verify_url`] checks `msg_signature`
//!   over the echostr and returns its plaintext, which is the response body, when it
//!   is a short token (never a message).
//! * POST (messages): [`WecomCrypto::decrypt_message`] takes the raw XML body
//!   (refused over [`MAX_BODY_BYTES`]), verifies, decrypts and parses it into an
//!   [`InboundMessage`].
//! * Passive reply: build it with [`text_reply_xml`], then wrap it with
//!   [`WecomCrypto::encrypt_reply`].
//!
//! Signature: hex SHA1 of the sorted concatenation of token, timestamp, nonce and
//! ciphertext. Cipher: AES-256-CBC, key = base64(EncodingAESKey + "="), IV = the
//! key's first 16 bytes, PKCS#7 padding to 32 bytes. Plaintext: 16 random bytes,
//! big-endian u32 length, message, receive id (the corp id, checked on decrypt).
//! No input makes any of this panic.

pub mod callback;
mod crypto;
mod error;
pub mod robot;
mod xml;

pub use crypto::{
    is_echostr, parse_inbound_message, parse_reply_envelope, text_reply_xml, InboundMessage,
    ReplyEnvelope, WecomCrypto, WecomError, MAX_BODY_BYTES, MAX_ECHOSTR_BYTES,
};
pub use xml::cdata;
