//! The WeCom (企业微信) callback: URL verification (GET) and encrypted messages (POST)
//! answered with an encrypted passive reply; long replies continue through the group
//! robot webhook when one is configured. Retries of the same message get the same reply.

use super::{App, Channel};
use crate::advisor::reply::{Block, Reply};
use crate::wecom::{text_reply_xml, WecomError};
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A passive text reply holds at most this many bytes (WeCom's limit).
pub const PASSIVE_MAX_BYTES: usize = 2048;
/// A robot markdown message holds at most this many bytes.
pub const ROBOT_MAX_BYTES: usize = 4096;
/// The robot webhook accepts 20 messages a minute.
pub const ROBOT_PER_MIN: f64 = 20.0;

#[derive(Deserialize)]
pub struct CallbackQuery {
    msg_signature: Option<String>,
    timestamp: Option<String>,
    nonce: Option<String>,
    echostr: Option<String>,
}

fn status_for(e: &WecomError) -> StatusCode {
    match e {
        WecomError::BadSignature => StatusCode::UNAUTHORIZED,
        WecomError::WrongReceiveId => StatusCode::FORBIDDEN,
        WecomError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    }
}

fn reject(e: WecomError) -> Response {
    tracing::warn!(error = %e, "wecom callback rejected");
    (status_for(&e), e.to_string()).into_response()
}

fn not_configured() -> Response {
    (StatusCode::NOT_FOUND, "WeCom is not configured").into_response()
}

/// `GET /wecom/callback`: verify and return the decrypted echostr.
pub async fn verify(AxState(app): AxState<Arc<App>>, Query(q): Query<CallbackQuery>) -> Response {
    let Some(c) = app.wecom.as_ref() else {
        return not_configured();
    };
    let (Some(sig), Some(ts), Some(nonce), Some(echo)) =
        (q.msg_signature, q.timestamp, q.nonce, q.echostr)
    else {
        return (
            StatusCode::BAD_REQUEST,
            "msg_signature, timestamp, nonce and echostr are required",
        )
            .into_response();
    };
    match c.verify_url(&sig, &ts, &nonce, &echo) {
        Ok(plain) => plain.into_response(),
        Err(e) => reject(e),
    }
}

/// WeCom text: no markdown in a passive reply, so bold marks go and tables become lines.
pub fn plain_text(reply: &Reply) -> String {
    let mut out = String::new();
    for b in &reply.blocks {
        match b {
            Block::Title(t) | Block::Text(t) => {
                out.push_str(&t.replace("**", ""));
                out.push('\n');
            }
            Block::Bullets(items) => {
                for i in items {
                    out.push_str("· ");
                    out.push_str(&i.replace("**", ""));
                    out.push('\n');
                }
            }
            Block::Table { head, rows } => {
                out.push_str(&head.join(" | "));
                out.push('\n');
                for r in rows {
                    out.push_str(&r.join(" | "));
                    out.push('\n');
                }
            }
        }
    }
    out.trim_end().to_string()
}

/// Splits text into pieces of at most `max` bytes at line boundaries (a single longer
/// line is cut at a char boundary).
pub fn split_bytes(text: &str, max: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        let mut line = line;
        while line.len() > max {
            let mut cut = max;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            parts.push(line[..cut].to_string());
            line = &line[cut..];
        }
        if cur.len() + line.len() > max {
            parts.push(std::mem::take(&mut cur));
        }
        cur.push_str(line);
    }
    if !cur.trim().is_empty() {
        parts.push(cur);
    }
    parts
        .into_iter()
        .map(|p| p.trim_end().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Strips a leading `@bot` mention of a group-robot message.
fn strip_mention(s: &str) -> &str {
    let t = s.trim_start();
    match t.strip_prefix('@') {
        Some(rest) => rest
            .split_once([' ', '\u{2005}', '\u{3000}'])
            .map_or("", |(_, r)| r)
            .trim_start(),
        None => t,
    }
}

/// `POST /wecom/callback`: decrypt, answer, encrypt the passive reply.
pub async fn message(
    AxState(app): AxState<Arc<App>>,
    Query(q): Query<CallbackQuery>,
    body: String,
) -> Response {
    let Some(c) = app.wecom.as_ref() else {
        return not_configured();
    };
    let (Some(sig), Some(ts), Some(nonce)) = (q.msg_signature, q.timestamp, q.nonce) else {
        return (
            StatusCode::BAD_REQUEST,
            "msg_signature, timestamp and nonce are required",
        )
            .into_response();
    };
    let msg = match c.decrypt_message(&sig, &ts, &nonce, &body) {
        Ok(m) => m,
        Err(e) => return reject(e),
    };
    if msg.msg_type != "text" {
        return "success".into_response(); // events and media: acknowledged, not answered
    }
    // WeCom retries a callback it got no answer to: one reply per message.
    let key = msg
        .msg_id
        .clone()
        .unwrap_or_else(|| format!("{}:{}", msg.from_user, msg.create_time));
    let key = format!("wecom:{key}");
    match app.store.reply(&key).await {
        Ok(Some(cached)) => {
            app.metrics.duplicate("wecom");
            return cached.into_response();
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "store unavailable: WeCom retry check skipped"),
    }
    let question = strip_mention(msg.content.as_deref().unwrap_or(""));
    let conversation = format!("wecom:{}", msg.chat_id.as_deref().unwrap_or(&msg.from_user));
    let answer = app.ask(Channel::Wecom, question, Some(&conversation)).await;
    let text = plain_text(&answer.answer.rendered);
    let max = app.settings.wecom_passive_max_bytes.min(PASSIVE_MAX_BYTES);
    let mut parts = split_bytes(&text, max);
    let first = if parts.len() > 1 {
        let robot = msg
            .webhook_url
            .clone()
            .or_else(|| app.settings.wecom_robot_webhook_url.clone());
        match robot {
            Some(url) => {
                let rest = split_bytes(&parts[1..].join("\n"), ROBOT_MAX_BYTES);
                app.push_robot(url, rest);
                parts.swap_remove(0)
            }
            None => {
                let pointer = format!(
                    "\n……完整回复见控制台 / full reply: {}",
                    app.settings.console_url
                );
                let keep = split_bytes(&parts[0], max - pointer.len());
                format!(
                    "{}{pointer}",
                    keep.first().map(String::as_str).unwrap_or("")
                )
            }
        }
    } else {
        parts.pop().unwrap_or_default()
    };
    let reply_xml = text_reply_xml(&msg.from_user, &msg.to_user, now_unix(), &first);
    let nonce = format!("{:010}", now_unix() % 10_000_000_000);
    match c.encrypt_reply(&reply_xml, &now_unix().to_string(), &nonce) {
        Ok(envelope) => {
            // WeCom retries within seconds; five minutes covers every retry.
            if let Err(e) = app
                .store
                .set_reply(&key, &envelope, Duration::from_secs(300))
                .await
            {
                tracing::warn!(error = %e, "store unavailable: WeCom reply not remembered");
            }
            envelope.into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "wecom reply encryption failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_lines_within_bytes() {
        let text = "一二三\nabc\n".repeat(400);
        let parts = split_bytes(&text, 2048);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.len() <= 2048));
        assert!(parts.iter().all(|p| p.ends_with("abc")));
        let long = "长".repeat(3000);
        assert!(split_bytes(&long, 2048).iter().all(|p| p.len() <= 2048));
    }

    #[test]
    fn mentions_are_stripped() {
        assert_eq!(
            strip_mention("@GPU助手 4090 能跑 70B 吗"),
            "4090 能跑 70B 吗"
        );
        assert_eq!(strip_mention("4090 能跑 70B 吗"), "4090 能跑 70B 吗");
        assert_eq!(strip_mention("@bot"), "");
    }
}
