//! Mode A, the interactions endpoint: `POST /discord/interactions`, signature checked,
//! PING answered, a slash command answered in the HTTP response itself.

use super::*;

pub(super) struct Endpoint {
    chat: Chat,
    console_url: String,
    verifier: Verifier,
}

pub(super) const ROUTE: &str = "/discord/interactions";

pub(super) fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A JSON error `{"error": {"code", "message"}}`, as every route of the server answers.
pub(super) fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    (status, Json(body)).into_response()
}

pub(super) async fn interactions(
    State(ep): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let checked = ep.verifier.verify(
        header(&headers, "x-signature-ed25519"),
        header(&headers, "x-signature-timestamp"),
        &body,
        unix_now(),
    );
    if let Err(why) = checked {
        return error(StatusCode::UNAUTHORIZED, "unauthorized", why);
    }
    let v: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_json",
                format!(
                    "malformed interaction at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        }
    };
    match v.get("type").and_then(|t| t.as_u64()) {
        Some(1) => Json(serde_json::json!({"type": 1})).into_response(),
        Some(2) => {
            let Some(cmd) = SlashCommand::from_json(&v) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_interaction",
                    "an application command needs data.name",
                );
            };
            let r = answer_command(&ep.chat, &cmd, &ep.console_url).await;
            Json(r).into_response()
        }
        _ => error(
            StatusCode::BAD_REQUEST,
            "bad_interaction",
            "unsupported interaction type",
        ),
    }
}

/// The router with `POST /discord/interactions`, to merge into the server's router (which
/// sets the body limit for every route).
pub fn interactions_routes(
    chat: &Chat,
    console_url: &str,
    public_key_hex: &str,
) -> Result<Router, String> {
    let verifier = Verifier::new(public_key_hex)?;
    let ep = Arc::new(Endpoint {
        chat: chat.clone(),
        console_url: console_url.to_string(),
        verifier,
    });
    Ok(Router::new()
        .route(ROUTE, post(interactions))
        .with_state(ep))
}
