//! Discord's request signatures: Ed25519 over `timestamp + raw body` with the
//! application's public key, and a freshness window.

use super::*;

/// Checks Discord's request signatures with the application's public key.
#[derive(Clone)]
pub struct Verifier {
    key: VerifyingKey,
}

impl Verifier {
    /// `hex_key`: the application's public key as shown in the developer portal.
    pub fn new(hex_key: &str) -> Result<Verifier, String> {
        let bytes =
            hex::decode(hex_key.trim()).map_err(|e| format!("DISCORD_PUBLIC_KEY: not hex: {e}"))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "DISCORD_PUBLIC_KEY: not 32 bytes (64 hex digits)".to_string())?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|_| "DISCORD_PUBLIC_KEY: not an Ed25519 public key".to_string())?;
        Ok(Verifier { key })
    }

    /// Verifies `signature_hex` (`X-Signature-Ed25519`) over `timestamp` (`X-Signature-
    /// Timestamp`) followed by `body`, and that the timestamp is within ±5 minutes of `now`.
    pub fn verify(
        &self,
        signature_hex: Option<&str>,
        timestamp: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<(), &'static str> {
        let (Some(sig), Some(ts)) = (signature_hex, timestamp) else {
            return Err("missing X-Signature-Ed25519 or X-Signature-Timestamp");
        };
        let sig: [u8; 64] = hex::decode(sig.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or("malformed signature")?;
        let sig = Signature::from_bytes(&sig);
        let mut msg = Vec::with_capacity(ts.len() + body.len());
        msg.extend_from_slice(ts.as_bytes());
        msg.extend_from_slice(body);
        self.key
            .verify_strict(&msg, &sig)
            .map_err(|_| "bad signature")?;
        let t: i64 = ts.trim().parse().map_err(|_| "malformed timestamp")?;
        if (now - t).abs() > MAX_SKEW_SECS {
            return Err("stale timestamp");
        }
        Ok(())
    }
}
