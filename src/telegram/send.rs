//! Calls to the Bot API with retries where a retry cannot duplicate a message, and a
//! reply sent in parts, the first quoting the question.

use super::*;

/// Whether a Bot API call may be made again after a failure that may have reached
/// Telegram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Reads and settings (`getMe`, `getUpdates`, `setWebhook`, …): the same call twice
    /// does no harm, so any transient failure is tried again.
    Idempotent,
    /// `sendMessage`: tried again only when the first try surely did not get through
    /// (flood control, a connection never made). A timeout, a 5xx or an answer that is
    /// not JSON may follow a delivered message: trying again would send it twice.
    Delivery,
}

/// Worth trying again: flood control, and for idempotent calls network errors and
/// server errors (Telegram's 5xx bodies, or a proxy's non-JSON error page).
pub(super) fn retry_delay(e: &RequestError, backoff: Duration, retry: Retry) -> Option<Duration> {
    match (e, retry) {
        (RequestError::RetryAfter(s), _) => Some(s.duration().max(Duration::from_millis(100))),
        (RequestError::Network(n), Retry::Delivery) => n.is_connect().then_some(backoff),
        (RequestError::Api(ApiError::Unknown(d)), Retry::Delivery) => d
            .to_ascii_lowercase()
            .contains("too many requests")
            .then_some(backoff),
        (_, Retry::Delivery) => None,
        (
            RequestError::Network(_) | RequestError::InvalidJson { .. } | RequestError::Io(_),
            Retry::Idempotent,
        ) => Some(backoff),
        (RequestError::Api(ApiError::Unknown(d)), Retry::Idempotent) => {
            let d = d.to_ascii_lowercase();
            let server = [
                "internal server error",
                "bad gateway",
                "service unavailable",
                "gateway timeout",
                "too many requests",
            ];
            server.iter().any(|s| d.contains(s)).then_some(backoff)
        }
        _ => None,
    }
}

/// Runs a Bot API call, trying again on `RetryAfter` (after the time Telegram asks for)
/// and, as `retry` allows, on network and server errors (after 0.5 s, 1 s, 2 s, 4 s), at
/// most `MAX_TRIES` times in all.
pub async fn send_with_retry<T, F, Fut>(
    what: &str,
    retry: Retry,
    mut call: F,
) -> Result<T, RequestError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
{
    let mut backoff = FIRST_BACKOFF;
    let mut tries = 0;
    loop {
        tries += 1;
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) => match retry_delay(&e, backoff, retry) {
                Some(wait) if tries < MAX_TRIES => {
                    tracing::warn!(method = what, error = %e, try_ = tries, wait_ms = wait.as_millis() as u64, "telegram call failed; trying again");
                    tokio::time::sleep(wait).await;
                    if !matches!(e, RequestError::RetryAfter(_)) {
                        backoff *= 2;
                    }
                }
                _ => {
                    tracing::warn!(method = what, error = %e, tries, "telegram call failed; giving up");
                    return Err(e);
                }
            },
        }
    }
}

/// Telegram HTML back to plain text (tags out, entities decoded), for a part Telegram
/// could not parse.
pub(super) fn html_to_plain(html: &str) -> String {
    let mut o = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => o.push(c),
            _ => {}
        }
    }
    o.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Sends `parts` (Telegram HTML) to the chat of `msg`, the first as a reply to it.
pub(super) async fn send_parts(
    bot: &Bot,
    msg: &Message,
    parts: Vec<String>,
) -> Result<(), RequestError> {
    let chat_id = msg.chat.id;
    let thread = msg.thread_id.filter(|_| msg.is_topic_message);
    for (i, part) in parts.into_iter().enumerate() {
        let reply_to = (i == 0).then(|| ReplyParameters::new(msg.id).allow_sending_without_reply());
        let request = |text: String, html: bool| {
            let mut r = bot.send_message(chat_id, text);
            if html {
                r = r.parse_mode(ParseMode::Html);
            }
            if let Some(p) = &reply_to {
                r = r.reply_parameters(p.clone());
            }
            if let Some(t) = thread {
                r = r.message_thread_id(t);
            }
            r
        };
        let sent = send_with_retry("sendMessage", Retry::Delivery, || {
            request(part.clone(), true).send()
        });
        match sent.await {
            Ok(_) => {}
            Err(RequestError::Api(ApiError::CantParseEntities(e))) => {
                tracing::warn!(error = %e, "telegram refused our HTML; sending plain text");
                let plain = html_to_plain(&part);
                send_with_retry("sendMessage", Retry::Delivery, || {
                    request(plain.clone(), false).send()
                })
                .await?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
