//! Authentication of `/v1/ask`: bearer tokens and HMAC-SHA256 request signatures over
//! `timestamp + "." + raw body`, each with several accepted values for rotation, all
//! compared in constant time. Pure: the clock is an argument.

use crate::config::Secret;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Signed requests must carry a timestamp within this many seconds of ours.
pub const MAX_SKEW_SECS: i64 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    Missing,
    BadToken,
    BadSignature,
    StaleTimestamp,
    BadTimestamp,
}

impl AuthError {
    pub fn message(self) -> &'static str {
        match self {
            AuthError::Missing => {
                "authentication required: Authorization: Bearer or X-Signature-256 + X-Timestamp"
            }
            AuthError::BadToken => "invalid bearer token",
            AuthError::BadSignature => "invalid X-Signature-256",
            AuthError::StaleTimestamp => {
                "X-Timestamp is more than 300 s away from the server's clock"
            }
            AuthError::BadTimestamp => "X-Timestamp must be unix seconds",
        }
    }
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// The credentials of `Authorization: <scheme> <credentials>` when the scheme is
/// `Bearer`, matched case-insensitively (RFC 7235 §2.1), spaces around either tolerated.
pub fn bearer_token(header: &str) -> Option<&str> {
    let h = header.trim_start();
    let (scheme, rest) = h.split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim())
        .filter(|t| !t.is_empty())
}

/// `Authorization: Bearer T` against the accepted tokens.
pub fn bearer(header: Option<&str>, tokens: &[Secret]) -> Result<(), AuthError> {
    let h = header.ok_or(AuthError::Missing)?;
    let t = bearer_token(h).ok_or(AuthError::BadToken)?;
    // Check every token (no early exit) so timing does not tell which one is close.
    let ok = tokens.iter().fold(false, |acc, s| {
        acc | ct_eq(t.as_bytes(), s.expose().as_bytes())
    });
    if ok {
        Ok(())
    } else {
        Err(AuthError::BadToken)
    }
}

/// The signature header value for `body` at `timestamp` under `secret`.
pub fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let out = mac.finalize().into_bytes();
    let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// `X-Signature-256: sha256=HEX` with `X-Timestamp` against the accepted secrets.
pub fn signature(
    sig: Option<&str>,
    timestamp: Option<&str>,
    body: &[u8],
    secrets: &[Secret],
    now_unix: i64,
) -> Result<(), AuthError> {
    let (Some(sig), Some(ts)) = (sig, timestamp) else {
        return Err(AuthError::Missing);
    };
    let t: i64 = ts.trim().parse().map_err(|_| AuthError::BadTimestamp)?;
    // abs_diff: `now - t` overflows for a timestamp near i64::MIN (and wrapped to "fresh").
    if now_unix.abs_diff(t) > MAX_SKEW_SECS.unsigned_abs() {
        return Err(AuthError::StaleTimestamp);
    }
    let given = sig.trim().to_ascii_lowercase();
    let ok = secrets.iter().fold(false, |acc, s| {
        acc | ct_eq(
            given.as_bytes(),
            sign(s.expose(), ts.trim(), body).as_bytes(),
        )
    });
    if ok {
        Ok(())
    } else {
        Err(AuthError::BadSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(v: &[&str]) -> Vec<Secret> {
        v.iter().map(|s| Secret::new(*s)).collect()
    }

    #[test]
    fn hmac_matches_a_known_vector() {
        // RFC 4231 test case 2 shape: key "Jefe", data "what do ya want for nothing?".
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn signatures_with_rotation_and_skew() {
        let body = br#"{"text":"hi"}"#;
        let s = secrets(&["old", "new"]);
        let now = 1_700_000_000;
        let good = sign("new", "1700000000", body);
        assert_eq!(
            signature(Some(&good), Some("1700000000"), body, &s, now),
            Ok(())
        );
        assert_eq!(
            signature(
                Some(&sign("old", "1700000000", body)),
                Some("1700000000"),
                body,
                &s,
                now + 299
            ),
            Ok(())
        );
        assert_eq!(
            signature(Some(&good), Some("1700000000"), body, &s, now + 301),
            Err(AuthError::StaleTimestamp)
        );
        assert_eq!(
            signature(Some(&good), Some("1700000000"), b"tampered", &s, now),
            Err(AuthError::BadSignature)
        );
        assert_eq!(
            signature(
                Some(&sign("other", "1700000000", body)),
                Some("1700000000"),
                body,
                &s,
                now
            ),
            Err(AuthError::BadSignature)
        );
        assert_eq!(
            signature(Some(&good), Some("soon"), body, &s, now),
            Err(AuthError::BadTimestamp)
        );
        assert_eq!(
            signature(None, Some("1"), body, &s, now),
            Err(AuthError::Missing)
        );
    }

    #[test]
    fn bearer_tokens() {
        let t = secrets(&["a1", "b2"]);
        assert_eq!(bearer(Some("Bearer b2"), &t), Ok(()));
        assert_eq!(bearer(Some("Bearer b3"), &t), Err(AuthError::BadToken));
        assert_eq!(bearer(Some("Basic b2"), &t), Err(AuthError::BadToken));
        assert_eq!(bearer(None, &t), Err(AuthError::Missing));
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_spaces_are_tolerated() {
        let t = secrets(&["a1"]);
        for h in [
            "BEARER a1",
            "bEaReR a1",
            "Bearer   a1",
            "  Bearer a1  ",
            "Bearer\ta1",
        ] {
            assert_eq!(bearer(Some(h), &t), Ok(()), "{h:?}");
        }
        for h in ["Bearera1", "Bearer", "Bearer   ", "Bearer a2", "Token a1"] {
            assert_eq!(bearer(Some(h), &t), Err(AuthError::BadToken), "{h:?}");
        }
    }

    #[test]
    fn a_timestamp_far_in_the_past_is_stale_not_fresh() {
        let body = b"{}";
        let s = secrets(&["k"]);
        let now = 1_700_000_000i64;
        for t in [now + i64::MIN, i64::MIN, i64::MAX, -1] {
            let ts = t.to_string();
            assert_eq!(
                signature(Some(&sign("k", &ts, body)), Some(&ts), body, &s, now),
                Err(AuthError::StaleTimestamp),
                "{ts}"
            );
        }
    }
}
