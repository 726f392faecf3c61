//! The WeCom (企业微信) callback: URL verification (GET) and encrypted messages (POST)
//! answered with an encrypted passive reply; long replies continue through the group
//! robot webhook when one is configured. Retries of the same message get the same reply.

use super::robot::Robot;
use super::{text_reply_xml, WecomCrypto, WecomError};
use crate::app::{Channel, Chat, Inbound, Outcome};
use crate::render::{plain_text, split_bytes};
use axum::extract::{Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
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
        WecomError::WrongReceiveId => StatusCode::FORBIDDEN,
        WecomError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    }
}

fn reject(e: WecomError) -> Response {
    tracing::warn!(error = %e, "wecom callback rejected");
    (status_for(&e), e.to_string()).into_response()
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
    let chat = &cb.chat;
    match chat.store.reply(&key).await {
        Ok(Some(cached)) => {
            chat.metrics.duplicate(Channel::Wecom);
            return cached.into_response();
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "store unavailable: WeCom retry check skipped"),
    }
    let inbound = Inbound {
        channel: Channel::Wecom,
        chat: msg.chat_id.clone().unwrap_or_else(|| msg.from_user.clone()),
        user: msg.from_user.clone(),
        // The delivery id: WeCom's MsgId, or sender and time for messages without one.
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
            if let Err(e) = chat
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
