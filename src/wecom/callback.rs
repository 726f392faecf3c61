//! The WeCom (企业微信) callback: URL verification (GET) and encrypted messages (POST)
//! answered with an encrypted passive reply; long replies continue through the group
//! robot webhook when one is configured. Retries of the same message get the same reply.

use super::robot::Robot;
use super::{parse_inbound_message, text_reply_xml, InboundMessage, WecomCrypto, WecomError};
use crate::app::{Channel, Chat, Inbound, Outcome};
use crate::render::{plain_text, split_bytes};
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The callback's path.
pub const PATH: &str = "/wecom/callback";

/// What the callback needs: the app's crypto, the chat layer and the reply settings.
pub struct Callback {
    pub crypto: WecomCrypto,
    pub chat: Chat,
    /// A passive reply is cut to this many bytes (at most [`PASSIVE_MAX_BYTES`]).
    pub passive_max_bytes: usize,
    /// The group robot for the rest of a long reply, when the message names none.
    pub robot_url: Option<String>,
    pub robot: Arc<Robot>,
    /// Where a cut reply points when no robot can carry the rest.
    pub console_url: String,
}

/// `GET` and `POST /wecom/callback`; merged by `server` when WeCom is configured.
pub fn routes(cb: Arc<Callback>) -> Router {
    Router::new()
        .route(PATH, get(verify).post(message))
        .with_state(cb)
}

/// A passive text reply holds at most this many bytes (WeCom's limit).
pub const PASSIVE_MAX_BYTES: usize = 2048;

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
        WecomError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// The one answer to every failure after the signature checked out (base64, AES,
/// padding, length field, receive id, UTF-8, message XML, echostr shape).
pub const UNDECRYPTABLE: &str = "wecom: cannot decrypt the message";

fn reject(e: WecomError) -> Response {
    if e.is_decryption() {
        return undecryptable(e);
    }
    tracing::warn!(error = %e, "wecom callback rejected");
    (status_for(&e), e.to_string()).into_response()
}

/// A signed ciphertext that does not open: the detail goes to the debug log only, the
/// sender gets [`UNDECRYPTABLE`] whatever went wrong, so the response tells nothing
/// about the plaintext (no padding oracle).
fn undecryptable(e: WecomError) -> Response {
    tracing::debug!(error = %e, "wecom callback: signed but not decryptable");
    tracing::warn!("wecom callback rejected: signed but not decryptable");
    (StatusCode::BAD_REQUEST, UNDECRYPTABLE).into_response()
}

/// The dedupe key of a message, also its delivery id: WeCom's MsgId, else a hash of
/// sender, chat, time and content (two messages of one second are two messages).
fn delivery_key(msg: &InboundMessage) -> String {
    if let Some(id) = msg.msg_id.as_deref().filter(|id| !id.is_empty()) {
        return format!("wecom:{id}");
    }
    let mut h = Sha256::new();
    for part in [
        msg.from_user.as_str(),
        msg.chat_id.as_deref().unwrap_or(""),
        &msg.create_time.to_string(),
        msg.content.as_deref().unwrap_or(""),
    ] {
        // Length-prefixed, so that no two field lists hash the same bytes.
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    format!("wecom:h:{}", hex::encode(&h.finalize()[..16]))
}

/// `GET /wecom/callback`: verify and return the decrypted echostr.
pub async fn verify(
    AxState(cb): AxState<Arc<Callback>>,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let c = &cb.crypto;
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

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `POST /wecom/callback`: decrypt, answer, encrypt the passive reply.
pub async fn message(
    AxState(cb): AxState<Arc<Callback>>,
    Query(q): Query<CallbackQuery>,
    body: String,
) -> Response {
    let c = &cb.crypto;
    let (Some(sig), Some(ts), Some(nonce)) = (q.msg_signature, q.timestamp, q.nonce) else {
        return (
            StatusCode::BAD_REQUEST,
            "msg_signature, timestamp and nonce are required",
        )
            .into_response();
    };
    let plain = match c.decrypt_message_xml(&sig, &ts, &nonce, &body) {
        Ok(p) => p,
        Err(e) => return reject(e),
    };
    // The message XML is plaintext too: its errors look like any other decrypt failure.
    let msg = match parse_inbound_message(&plain) {
        Ok(m) => m,
        Err(e) => return undecryptable(e),
    };
    if msg.msg_type != "text" {
        return "success".into_response(); // events and media: acknowledged, not answered
    }
    // WeCom retries a callback it got no answer to: one reply per message.
    let key = delivery_key(&msg);
    let chat = &cb.chat;
    match chat.store.reply(&key).await {
        Ok(Some(cached)) => {
            chat.metrics.duplicate(Channel::Wecom);
            return cached.into_response();
        }
        Ok(None) => {}
        Err(e) => tracing::debug!(error = %e, "store unavailable: WeCom retry check skipped"),
    }
    let inbound = Inbound {
        channel: Channel::Wecom,
        chat: msg.chat_id.clone().unwrap_or_else(|| msg.from_user.clone()),
        user: msg.from_user.clone(),
        // The delivery id: WeCom's MsgId, or a hash of the message for those without.
        message_id: key.clone(),
        text: msg.content.clone().unwrap_or_default(),
        group: msg.chat_id.is_some(),
        // A group robot only receives messages that mention it.
        mentions_bot: true,
        ..Inbound::default()
    };
    let text = match chat.handle(&inbound).await {
        Outcome::Answer(a) => plain_text(&a.answer.rendered),
        Outcome::Notice(n) => n,
        // A retry that raced the first delivery, or a silenced sender: acknowledged.
        Outcome::Limited { .. } | Outcome::Silent(_) => return "success".into_response(),
    };
    let max = cb.passive_max_bytes.min(PASSIVE_MAX_BYTES);
    let mut parts = split_bytes(&text, max);
    let first = if parts.len() > 1 {
        let robot = msg.webhook_url.clone().or_else(|| cb.robot_url.clone());
        match robot {
            Some(url) => {
                let rest = split_bytes(&parts[1..].join("\n"), super::robot::ROBOT_MAX_BYTES);
                cb.robot.push(url, rest);
                parts.swap_remove(0)
            }
            None => {
                let pointer = format!("\n……完整回复见控制台 / full reply: {}", cb.console_url);
                let keep = split_bytes(&parts[0], max.saturating_sub(pointer.len()));
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
            if let Err(e) = chat
                .store
                .set_reply(&key, &envelope, Duration::from_secs(300))
                .await
            {
                tracing::debug!(error = %e, "store unavailable: WeCom reply not remembered");
            }
            envelope.into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "wecom reply encryption failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
