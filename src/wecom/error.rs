//! What can go wrong verifying, decrypting or parsing a WeCom callback: one error type
//! for the crypto and the XML reader, which both return it.

use std::fmt;

/// XML bodies (and base64 ciphertexts) longer than this many bytes are refused with
/// [`WecomError::TooLarge`] before any parsing or decoding.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Everything that can go wrong verifying, decrypting or parsing a callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WecomError {
    /// `msg_signature` does not match SHA1 over token, timestamp, nonce and ciphertext.
    BadSignature,
    /// The ciphertext is not valid base64.
    BadBase64,
    /// The EncodingAESKey does not decode to 32 bytes.
    BadKey,
    /// The decoded ciphertext is empty or not a whole number of 16-byte AES blocks.
    BadCiphertext,
    /// The PKCS#7 (block 32) padding is 0, over 32, longer than the data, or inconsistent.
    BadPadding,
    /// The plaintext is shorter than its 16+4-byte header, or its length field points
    /// past the end of the plaintext.
    BadLength,
    /// The decrypted message is not UTF-8.
    BadUtf8,
    /// The receive id after the message is not the configured corp id.
    WrongReceiveId,
    /// The XML is malformed (the string says how), or a field has a bad value.
    BadXml(String),
    /// A required XML element is absent.
    MissingField(&'static str),
    /// The input exceeds [`MAX_BODY_BYTES`].
    TooLarge,
    /// A reply timestamp that is not a non-empty string of ASCII digits.
    BadTimestamp,
    /// The operating system's random source failed.
    Random(String),
    /// A URL-verification echostr that decrypts to something other than a short token
    /// (a captured message's ciphertext, say).
    NotEchostr,
}

impl WecomError {
    /// Raised after the signature checked out, by decrypting the ciphertext or reading
    /// the framing inside it. These must all look alike to the sender: telling padding
    /// from length errors apart is a CBC padding oracle.
    pub fn is_decryption(&self) -> bool {
        matches!(
            self,
            WecomError::BadBase64
                | WecomError::BadCiphertext
                | WecomError::BadPadding
                | WecomError::BadLength
                | WecomError::BadUtf8
                | WecomError::WrongReceiveId
                | WecomError::NotEchostr
        )
    }
}

impl fmt::Display for WecomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WecomError::BadSignature => f.write_str("wecom: signature mismatch"),
            WecomError::BadBase64 => f.write_str("wecom: invalid base64"),
            WecomError::BadKey => f.write_str("wecom: EncodingAESKey must decode to 32 bytes"),
            WecomError::BadCiphertext => {
                f.write_str("wecom: ciphertext is not a whole number of AES blocks")
            }
            WecomError::BadPadding => f.write_str("wecom: invalid PKCS#7 padding"),
            WecomError::BadLength => f.write_str("wecom: invalid plaintext length field"),
            WecomError::BadUtf8 => f.write_str("wecom: decrypted message is not UTF-8"),
            WecomError::WrongReceiveId => f.write_str("wecom: receive id does not match corp id"),
            WecomError::BadXml(why) => write!(f, "wecom: bad XML: {why}"),
            WecomError::MissingField(name) => write!(f, "wecom: missing XML element <{name}>"),
            WecomError::TooLarge => write!(f, "wecom: input exceeds {MAX_BODY_BYTES} bytes"),
            WecomError::BadTimestamp => f.write_str("wecom: timestamp must be decimal digits"),
            WecomError::Random(why) => write!(f, "wecom: random source failed: {why}"),
            WecomError::NotEchostr => f.write_str("wecom: echostr plaintext is not a token"),
        }
    }
}

impl std::error::Error for WecomError {}
