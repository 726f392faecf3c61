//! The Telegram adapter end to end against a fake Bot API server on 127.0.0.1 that
//! speaks the real wire format (`POST /bot<TOKEN>/<method>`, `{"ok":true,"result":…}`,
//! flood-control errors with `parameters.retry_after`).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use gpu_advisor::config::{Secret, Settings, Telegram};
use gpu_advisor::server::{self, Services};
use gpu_advisor::telegram;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "123:TEST";
const BOT_ID: i64 = 123;

#[derive(Default)]
struct Fake {
    /// Updates on offer; served while their id is at least the offset asked for.
    updates: Mutex<Vec<Value>>,
    /// Successful sendMessage bodies.
    sent: Mutex<Vec<Value>>,
    send_attempts: AtomicUsize,
    /// How many sendMessage calls still get a 429.
    fail_sends: AtomicUsize,
    commands: Mutex<Vec<Value>>,
    /// The `offset` of every getUpdates call, in order.
    offsets: Mutex<Vec<Option<i64>>>,
    actions: Mutex<Vec<Value>>,
    methods: Mutex<Vec<String>>,
    webhooks: Mutex<Vec<String>>,
    /// How many getMe calls still fail (an error page instead of JSON).
    fail_get_me: AtomicUsize,
    /// How many getUpdates calls still fail: 500 and 429 (retry_after 1) in turn.
    fail_updates: AtomicUsize,
    /// How many sendMessage calls still deliver the message but answer a 200 whose body
    /// is cut short (not JSON).
    garble_sends: AtomicUsize,
}

fn take_one(n: &AtomicUsize) -> Option<usize> {
    n.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
        .ok()
}

fn ok(result: Value) -> Response {
    axum::Json(json!({"ok": true, "result": result})).into_response()
}

fn api_error(status: StatusCode, description: &str, parameters: Option<Value>) -> Response {
    let mut body = json!({"ok": false, "error_code": status.as_u16(), "description": description});
    if let Some(p) = parameters {
        body["parameters"] = p;
    }
    (status, axum::Json(body)).into_response()
}

/// A JSON body, a form body as an object, anything else (multipart) as its raw text.
fn body_value(headers: &HeaderMap, body: &[u8]) -> Value {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.starts_with("application/json") {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    } else if ct.starts_with("application/x-www-form-urlencoded") {
        let mut m = serde_json::Map::new();
        for pair in String::from_utf8_lossy(body).split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            m.insert(k.to_string(), Value::String(v.to_string()));
        }
        Value::Object(m)
    } else {
        Value::String(String::from_utf8_lossy(body).into_owned())
    }
}

fn bot_user() -> Value {
    json!({"id": BOT_ID, "is_bot": true, "first_name": "GPU Advisor", "username": "gpu_advisor_bot"})
}

fn chat_json(id: i64) -> Value {
    if id < 0 {
        json!({"id": id, "type": "supergroup", "title": "GPU 租用交流群"})
    } else {
        json!({"id": id, "type": "private", "first_name": "Li"})
    }
}

async fn method(
    State(st): State<Arc<Fake>>,
    Path((bot, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if bot != format!("bot{TOKEN}") {
        return api_error(StatusCode::UNAUTHORIZED, "Unauthorized", None);
    }
    let v = body_value(&headers, &body);
    // Method names are case-insensitive (teloxide sends `GetMe`).
    let name = name.to_ascii_lowercase();
    st.methods.lock().unwrap().push(name.clone());
    let server_error = || {
        api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error",
            None,
        )
    };
    match name.as_str() {
        // A proxy's error page instead of the Bot API's JSON: a failure teloxide reports
        // at once (a 5xx would cost 10 s of teloxide's own wait, as getUpdates' does).
        "getme" if take_one(&st.fail_get_me).is_some() => {
            (StatusCode::OK, "<html>upstream connect error</html>").into_response()
        }
        // `left` counts down: 429 first, then 500.
        "getupdates" => match take_one(&st.fail_updates) {
            Some(left) if left % 2 == 0 => api_error(
                StatusCode::TOO_MANY_REQUESTS,
                "Too Many Requests: retry after 1",
                Some(json!({"retry_after": 1})),
            ),
            Some(_) => server_error(),
            None => get_updates(&st, &v).await,
        },
        "getme" => ok(json!({
            "id": BOT_ID, "is_bot": true, "first_name": "GPU Advisor",
            "username": "gpu_advisor_bot", "can_join_groups": true,
            "can_read_all_group_messages": false, "supports_inline_queries": false,
            "can_connect_to_business": false, "has_main_web_app": false
        })),
        "deletewebhook" | "sendchataction" | "setwebhook" | "setmycommands" => {
            match name.as_str() {
                "sendchataction" => st.actions.lock().unwrap().push(v),
                "setmycommands" => st.commands.lock().unwrap().push(v),
                "setwebhook" => st.webhooks.lock().unwrap().push(v.to_string()),
                _ => {}
            }
            ok(json!(true))
        }
        "getchatmember" => {
            let user = v["user_id"]
                .as_i64()
                .or_else(|| v["user_id"].as_str().and_then(|s| s.parse().ok()))
                .expect("user_id");
            let u = json!({"id": user, "is_bot": false, "first_name": "Li"});
            if user == ADMIN {
                ok(json!({
                    "status": "administrator", "user": u, "can_be_edited": false,
                    "is_anonymous": false, "can_manage_chat": true, "can_delete_messages": true,
                    "can_manage_video_chats": true, "can_restrict_members": true,
                    "can_promote_members": false, "can_change_info": true,
                    "can_invite_users": true, "can_post_stories": false,
                    "can_edit_stories": false, "can_delete_stories": false,
                    "can_pin_messages": true, "can_manage_topics": false
                }))
            } else {
                ok(json!({"status": "member", "user": u}))
            }
        }
        "sendmessage" => {
            let n = st.send_attempts.fetch_add(1, Ordering::SeqCst);
            if st
                .fail_sends
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
                .is_ok()
            {
                return api_error(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too Many Requests: retry after 1",
                    Some(json!({"retry_after": 1})),
                );
            }
            let chat = v["chat_id"].as_i64().expect("chat_id");
            let text = v["text"].as_str().expect("text").to_string();
            st.sent.lock().unwrap().push(v);
            if take_one(&st.garble_sends).is_some() {
                return (StatusCode::OK, r#"{"ok":true,"result":{"message_id":1"#).into_response();
            }
            ok(json!({
                "message_id": 10_000 + n, "date": 1_700_000_100, "chat": chat_json(chat),
                "from": bot_user(), "text": text
            }))
        }
        _ => api_error(StatusCode::NOT_FOUND, "Not Found: method not found", None),
    }
}

/// `getUpdates`: the updates from `offset` on, waiting up to 300 ms for some (a short
/// long poll).
async fn get_updates(st: &Fake, v: &Value) -> Response {
    let offset = v.get("offset").and_then(Value::as_i64);
    st.offsets.lock().unwrap().push(offset);
    let t0 = Instant::now();
    loop {
        let ready: Vec<Value> = st
            .updates
            .lock()
            .unwrap()
            .iter()
            .filter(|u| offset.is_none_or(|o| u["update_id"].as_i64().unwrap() >= o))
            .cloned()
            .collect();
        if !ready.is_empty() || t0.elapsed() > Duration::from_millis(300) {
            return ok(Value::Array(ready));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn fake() -> (String, Arc<Fake>) {
    let st = Arc::new(Fake::default());
    let router = Router::new()
        .route("/:bot/:method", post(method))
        .with_state(Arc::clone(&st));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, st)
}

fn app(api_url: &str, webhook: Option<(&str, Option<&str>)>) -> Services {
    app_with(api_url, webhook, Settings::default())
}

fn app_with(api_url: &str, webhook: Option<(&str, Option<&str>)>, base: Settings) -> Services {
    let settings = Settings {
        telegram: Some(Telegram {
            token: Secret::new(TOKEN),
            api_url: Some(api_url.to_string()),
            webhook_url: webhook.map(|(u, _)| u.to_string()),
            webhook_secret: webhook.and_then(|(_, s)| s).map(Secret::new),
        }),
        ..base
    };
    Services::build(gpu_advisor::data::embedded(), settings).unwrap()
}

/// A message update as Telegram sends it; a negative chat id is a supergroup.
fn update(update_id: i64, message_id: i64, chat: i64, user: i64, text: &str) -> Value {
    let mut msg = json!({
        "message_id": message_id, "date": 1_700_000_000, "chat": chat_json(chat),
        "from": {"id": user, "is_bot": false, "first_name": "Li", "language_code": "zh-hans"},
        "text": text
    });
    // Telegram marks mentions and commands; offsets and lengths count UTF-16 units.
    let mut entities = Vec::new();
    // Every `@name` the way Telegram marks it: the whole user name.
    if !text.starts_with('/') {
        for (i, _) in text.match_indices('@') {
            let name: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.len() >= 5 {
                let off = text[..i].encode_utf16().count();
                entities.push(json!({"type": "mention", "offset": off, "length": name.len() + 1}));
            }
        }
    }
    if text.starts_with('/') {
        let len = text
            .split_whitespace()
            .next()
            .unwrap()
            .encode_utf16()
            .count();
        entities.push(json!({"type": "bot_command", "offset": 0, "length": len}));
    }
    if !entities.is_empty() {
        msg["entities"] = Value::Array(entities);
    }
    json!({"update_id": update_id, "message": msg})
}

async fn wait_for(what: &str, timeout: Duration, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `run_polling` until it asks for the update after `last` (so every update up to
/// `last` was handled; None: until its first getUpdates), then shuts it down.
async fn poll_through(app: &Services, st: &Arc<Fake>, last: impl Into<Option<i64>>) {
    let last = last.into();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let tg = app.settings.telegram.clone().expect("telegram settings");
    let ready = app.readiness.part("telegram");
    let task = tokio::spawn(telegram::run_polling(app.chat.clone(), tg, ready, async {
        let _ = rx.await;
    }));
    wait_for(
        "getUpdates past the last update",
        Duration::from_secs(40),
        || {
            let offsets = st.offsets.lock().unwrap();
            match last {
                Some(l) => offsets.contains(&Some(l + 1)),
                None => !offsets.is_empty(),
            }
        },
    )
    .await;
    tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("polling stops at shutdown")
        .unwrap();
}

/// `telegram::start` in webhook mode: the router, returned at once.
async fn start_webhook(app: &Services) -> axum::Router {
    let started = tokio::time::timeout(
        Duration::from_secs(2),
        telegram::start(
            &app.chat,
            app.settings.telegram.as_ref().expect("telegram settings"),
            app.readiness.part("telegram"),
            std::future::pending(),
        ),
    )
    .await
    .expect("start returns at once")
    .expect("started");
    match started {
        telegram::Started::Webhook(router) => router,
        telegram::Started::Polling(_) => panic!("webhook mode returns the router"),
    }
}

fn sent(st: &Fake) -> Vec<Value> {
    st.sent.lock().unwrap().clone()
}

const GROUP: i64 = -1001234567890;
/// The group admin of the fake's getChatMember.
const ADMIN: i64 = 900;

#[tokio::test]
async fn only_an_admin_turns_on_auto_answer_in_a_group() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        update(800, 81, GROUP, 501, "/auto@gpu_advisor_bot on"),
        update(801, 82, GROUP, 502, "4090 能跑 70B 吗"),
        update(802, 83, GROUP, ADMIN, "/auto on"),
        update(803, 84, GROUP, 503, "4090 能跑 70B 吗"),
        update(804, 85, GROUP, 504, "今晚一起吃饭吗"),
    ]);
    poll_through(&app, &st, 804).await;
    let sent = sent(&st);
    let to = |id: i64| {
        sent.iter()
            .filter(|m| m["reply_parameters"]["message_id"] == json!(id))
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(to(81)[0].contains("admins"), "{sent:#?}");
    assert!(to(82).is_empty(), "auto-answer still off: {sent:#?}");
    assert!(to(83)[0].contains("Auto-answer is on"), "{sent:#?}");
    assert!(to(84)[0].contains("RTX 4090"), "{sent:#?}");
    assert!(to(85).is_empty(), "chatter stays unanswered: {sent:#?}");
    assert_eq!(sent.len(), 3, "{sent:#?}");
    let asked = st.methods.lock().unwrap().clone();
    assert_eq!(
        asked.iter().filter(|m| *m == "getchatmember").count(),
        2,
        "{asked:?}"
    );
}

#[tokio::test]
async fn group_mention_gets_one_html_reply_and_plain_chatter_none() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        update(100, 7, GROUP, 501, "@gpu_advisor_bot 4090 能跑 70B 吗"),
        update(101, 8, GROUP, 502, "今天天气不错，4090 真香"),
    ]);
    poll_through(&app, &st, 101).await;
    let sent = sent(&st);
    assert_eq!(sent.len(), 1, "one reply, to the mention only: {sent:#?}");
    let m = &sent[0];
    assert_eq!(m["chat_id"], json!(GROUP));
    assert_eq!(m["parse_mode"], json!("HTML"));
    assert_eq!(m["reply_parameters"]["message_id"], json!(7));
    assert_eq!(
        m["reply_parameters"]["allow_sending_without_reply"],
        json!(true)
    );
    let text = m["text"].as_str().unwrap();
    assert!(text.contains("RTX 4090"), "{text}");
    assert!(text.contains("装不下"), "the verdict: {text}");
    assert!(text.contains("<b>"), "HTML formatting: {text}");
    assert!(text.chars().count() <= 4096);
    let methods = st.methods.lock().unwrap().clone();
    assert!(
        methods.contains(&"deletewebhook".to_string()),
        "{methods:?}"
    );
    assert!(st
        .actions
        .lock()
        .unwrap()
        .iter()
        .all(|a| a["chat_id"] == json!(GROUP) && a["action"] == json!("typing")),);
}

#[tokio::test]
async fn group_without_mention_is_ignored() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        update(200, 1, GROUP, 501, "4090 能跑 70B 吗"),
        update(201, 2, GROUP, 502, "/price@other_bot a100"),
    ]);
    poll_through(&app, &st, 201).await;
    assert!(sent(&st).is_empty(), "{:#?}", sent(&st));
}

#[tokio::test]
async fn addressed_command_in_a_group() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates
        .lock()
        .unwrap()
        .push(update(300, 31, GROUP, 501, "/price@gpu_advisor_bot a100"));
    poll_through(&app, &st, 300).await;
    let sent = sent(&st);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    assert_eq!(sent[0]["reply_parameters"]["message_id"], json!(31));
    let text = sent[0]["text"].as_str().unwrap();
    assert!(text.contains("2,800"), "{text}");
}

#[tokio::test]
async fn flood_control_is_waited_out_and_the_message_arrives_once() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.fail_sends.store(1, Ordering::SeqCst);
    st.updates
        .lock()
        .unwrap()
        .push(update(400, 41, 777, 777, "4090 能跑 70B 吗"));
    let t0 = Instant::now();
    poll_through(&app, &st, 400).await;
    assert_eq!(
        st.send_attempts.load(Ordering::SeqCst),
        2,
        "one 429, one retry"
    );
    assert_eq!(sent(&st).len(), 1);
    assert!(
        t0.elapsed() >= Duration::from_secs(1),
        "retry_after honoured"
    );
    assert!(sent(&st)[0]["text"].as_str().unwrap().contains("RTX 4090"));
}

#[tokio::test]
async fn user_markup_is_escaped() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        // The core does not echo the question, but this answer (the FAQ "memory or
        // compute") carries `>` from the catalog, which must arrive escaped.
        update(
            500,
            51,
            888,
            888,
            "<script>alert(1)</script> & _x_ memory or compute?",
        ),
        update(
            501,
            52,
            888,
            888,
            "/compare <script>alert(1)</script> <b>&amp;</b>",
        ),
    ]);
    poll_through(&app, &st, 501).await;
    let sent = sent(&st);
    assert_eq!(sent.len(), 2, "both answered: {sent:#?}");
    let faq = sent[0]["text"].as_str().unwrap();
    assert!(
        faq.contains("capacity &gt; memory bandwidth"),
        "catalog text escaped: {faq}"
    );
    for m in &sent {
        let text = m["text"].as_str().unwrap();
        assert_eq!(m["parse_mode"], json!("HTML"));
        assert!(!text.contains("<script>"), "{text}");
        assert!(!text.contains("</script>"), "{text}");
        // Only our own tags may appear.
        for tag in text.split('<').skip(1) {
            let name: String = tag.chars().take_while(|c| *c != '>').collect();
            assert!(
                ["b", "/b", "pre", "/pre", "i", "/i", "code", "/code"].contains(&name.as_str()),
                "unexpected tag <{name}> in {text}"
            );
        }
        // A bare `&` would break Telegram's HTML parser.
        for (i, _) in text.match_indices('&') {
            let rest = &text[i..];
            assert!(
                ["&lt;", "&gt;", "&amp;", "&quot;"]
                    .iter()
                    .any(|e| rest.starts_with(e)),
                "unescaped & in {text}"
            );
        }
    }
}

#[tokio::test]
async fn commands_are_registered_in_english_and_chinese() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    poll_through(&app, &st, None).await;
    let calls = st.commands.lock().unwrap().clone();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let names = |c: &Value| -> Vec<String> {
        c["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["command"].as_str().unwrap().to_string())
            .collect()
    };
    let want = [
        "start", "help", "gpu", "price", "cards", "faq", "compare", "budget", "auto",
    ];
    let en = calls
        .iter()
        .find(|c| c.get("language_code").is_none())
        .expect("default (English) commands");
    let zh = calls
        .iter()
        .find(|c| c["language_code"] == json!("zh"))
        .expect("zh commands");
    assert_eq!(names(en), want);
    assert_eq!(names(zh), want);
    for c in zh["commands"].as_array().unwrap() {
        let d = c["description"].as_str().unwrap();
        assert!(
            d.chars().any(|ch| ('\u{4e00}'..='\u{9fff}').contains(&ch)),
            "{d}"
        );
    }
    for c in en["commands"].as_array().unwrap() {
        let d = c["description"].as_str().unwrap();
        assert!(d.is_ascii() && !d.is_empty(), "{d}");
    }
}

#[tokio::test]
async fn a_message_delivered_twice_is_answered_once() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    // Telegram re-sent the message under a new update id.
    st.updates.lock().unwrap().extend([
        update(600, 61, 999, 999, "两张 A100 40G 一年多少钱"),
        update(601, 61, 999, 999, "两张 A100 40G 一年多少钱"),
    ]);
    poll_through(&app, &st, 601).await;
    assert_eq!(sent(&st).len(), 1, "{:#?}", sent(&st));
}

#[tokio::test]
async fn webhook_checks_the_secret_and_answers_a_retried_update_once() {
    let (url, st) = fake().await;
    let app = app(
        &url,
        Some((
            "https://bot.example.test/telegram/webhook",
            Some("s3cret-token"),
        )),
    );
    let router = start_webhook(&app).await;
    wait_for("the start-up calls", Duration::from_secs(10), || {
        app.readiness.pending().is_empty()
    })
    .await;
    let hooks = st.webhooks.lock().unwrap().clone();
    assert_eq!(hooks.len(), 1);
    assert!(
        hooks[0].contains("https://bot.example.test/telegram/webhook"),
        "{hooks:?}"
    );
    assert!(hooks[0].contains("s3cret-token"), "{hooks:?}");
    assert!(!st
        .methods
        .lock()
        .unwrap()
        .contains(&"getupdates".to_string()));
    assert_eq!(st.commands.lock().unwrap().len(), 2);

    // Served as `serve` serves it: inside the server's router and its layers.
    let (listener, base) = crate::support::listener().await;
    tokio::spawn(server::serve(
        listener,
        app.router(vec![router]),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let hook = format!("{base}/telegram/webhook");
    let body = update(700, 71, 4242, 4242, "4090 能跑 70B 吗").to_string();
    let post = |secret: Option<&str>, body: String| {
        let mut r = client
            .post(&hook)
            .header("content-type", "application/json")
            .body(body);
        if let Some(s) = secret {
            r = r.header("X-Telegram-Bot-Api-Secret-Token", s);
        }
        r.send()
    };
    assert_eq!(post(None, body.clone()).await.unwrap().status(), 401);
    assert_eq!(
        post(Some("wrong"), body.clone()).await.unwrap().status(),
        401
    );
    assert_eq!(
        post(Some("s3cret-token"), "{not json".into())
            .await
            .unwrap()
            .status(),
        400
    );
    assert!(sent(&st).is_empty(), "rejected calls answer nothing");
    for _ in 0..2 {
        let r = post(Some("s3cret-token"), body.clone()).await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(
            r.headers().contains_key("x-request-id"),
            "the webhook gets a request id like every route"
        );
    }
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (status, n) in [(200, 2), (401, 2), (400, 1)] {
        let series = format!(
            "gpu_advisor_http_requests_total{{route=\"/telegram/webhook\",status=\"{status}\"}} {n}\n"
        );
        assert!(metrics.contains(&series), "{series} in {metrics}");
    }
    wait_for("the webhook reply", Duration::from_secs(10), || {
        !sent(&st).is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent = sent(&st);
    assert_eq!(
        sent.len(),
        1,
        "a retried update is answered once: {sent:#?}"
    );
    assert_eq!(sent[0]["reply_parameters"]["message_id"], json!(71));
    assert!(sent[0]["text"].as_str().unwrap().contains("RTX 4090"));
}

#[tokio::test]
async fn an_api_outage_delays_updates_but_loses_and_repeats_none() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    // getMe fails at start-up (an error page), getUpdates fails with 429 and then 500,
    // and one sendMessage gets flood control. (teloxide itself waits 10 s after any 5xx
    // before it reports the error, so the 500 here costs 10 s.)
    st.fail_get_me.store(1, Ordering::SeqCst);
    st.fail_updates.store(2, Ordering::SeqCst);
    st.fail_sends.store(1, Ordering::SeqCst);
    let questions = [
        "4090 能跑 70B 吗",
        "/price a100",
        "T4 多少钱",
        "预算 3500",
        "H100 80G 多少钱",
    ];
    st.updates.lock().unwrap().extend(
        questions
            .iter()
            .enumerate()
            .map(|(i, q)| update(900 + i as i64, 91 + i as i64, 555, 555, q)),
    );
    poll_through(&app, &st, 904).await;
    let sent = sent(&st);
    for id in 91..96 {
        let n = sent
            .iter()
            .filter(|m| m["reply_parameters"]["message_id"] == json!(id))
            .count();
        assert_eq!(n, 1, "message {id} answered {n} times: {sent:#?}");
    }
    assert_eq!(sent.len(), 5, "{sent:#?}");
    let methods = st.methods.lock().unwrap().clone();
    assert!(
        methods.iter().filter(|m| *m == "getme").count() >= 2,
        "getMe retried: {methods:?}"
    );
    assert_eq!(st.fail_updates.load(Ordering::SeqCst), 0, "outage served");
}

#[tokio::test]
async fn a_restart_resumes_after_the_last_handled_update() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        update(800, 81, 555, 555, "4090 能跑 70B 吗"),
        update(801, 82, 555, 555, "/price a100"),
    ]);
    poll_through(&app, &st, 801).await;
    assert_eq!(sent(&st).len(), 2);
    assert_eq!(
        st.offsets.lock().unwrap().first(),
        Some(&None),
        "a first run starts from Telegram's unconfirmed updates"
    );
    let before = st.offsets.lock().unwrap().len();
    // The fake keeps serving old updates to an old offset, like an unconfirmed batch.
    st.updates
        .lock()
        .unwrap()
        .push(update(802, 83, 555, 555, "/cards"));
    poll_through(&app, &st, 802).await;
    let offsets = st.offsets.lock().unwrap().clone();
    assert_eq!(
        offsets[before],
        Some(802),
        "the second run starts at the saved offset: {offsets:?}"
    );
    let sent = sent(&st);
    assert_eq!(sent.len(), 3, "only the new update is answered: {sent:#?}");
    assert_eq!(sent[2]["reply_parameters"]["message_id"], json!(83));
    assert_eq!(
        app.chat.store.setting(telegram::OFFSET_KEY).await.unwrap(),
        Some("803".to_string())
    );
}

#[test]
fn inbound_reads_mentions_replies_and_captions() {
    let me = teloxide::types::UserId(BOT_ID as u64);
    // From text, as on the wire (teloxide's `UpdateKind` does not read a `serde_json::Value`).
    let parse = |v: Value| -> teloxide::types::Update {
        let u: teloxide::types::Update = serde_json::from_str(&v.to_string()).unwrap();
        assert!(
            matches!(u.kind, teloxide::types::UpdateKind::Message(_)),
            "{v}"
        );
        u
    };
    let u = parse(update(1, 2, GROUP, 3, "@GPU_Advisor_Bot 4090 能跑 70B 吗"));
    let m = telegram::inbound(&u, "gpu_advisor_bot", me).unwrap();
    assert!(m.group && m.mentions_bot && !m.replies_to_bot);
    assert_eq!(m.chat, GROUP.to_string());
    assert_eq!(m.user, "3");
    assert_eq!(m.message_id, "2");

    let mut v = update(2, 3, GROUP, 4, "那 INT4 呢");
    v["message"]["reply_to_message"] = json!({
        "message_id": 1, "date": 1_700_000_000, "chat": chat_json(GROUP),
        "from": bot_user(), "text": "…"
    });
    let m = telegram::inbound(&parse(v), "gpu_advisor_bot", me).unwrap();
    assert!(m.replies_to_bot && !m.mentions_bot);

    let m = telegram::inbound(
        &parse(update(3, 4, 5, 5, "hi @gpu_advisor_bot2")),
        "gpu_advisor_bot",
        me,
    )
    .unwrap();
    assert!(!m.group && !m.mentions_bot);

    let mut v = update(4, 5, GROUP, 6, "x");
    let msg = v["message"].as_object_mut().unwrap();
    msg.remove("text");
    msg.insert(
        "photo".into(),
        json!([{"file_id": "f", "file_unique_id": "u", "width": 1, "height": 1}]),
    );
    msg.insert(
        "caption".into(),
        json!("@gpu_advisor_bot 这张卡能跑 13B 吗"),
    );
    let m = telegram::inbound(&parse(v), "gpu_advisor_bot", me).unwrap();
    assert!(m.mentions_bot);
    assert!(m.text.contains("13B"));

    let mut v = update(5, 6, GROUP, 7, "@gpu_advisor_bot hi");
    v["message"]["from"] = bot_user();
    assert!(
        telegram::inbound(&parse(v), "gpu_advisor_bot", me).is_none(),
        "bots are not asked"
    );
}

#[tokio::test]
async fn a_question_the_bot_cannot_answer_reaches_the_misses_log_and_the_report() {
    let (url, st) = fake().await;
    let dir = crate::support::temp_dir("telegram-misses");
    let log = dir.join("unanswered.jsonl");
    let settings = Settings {
        unanswered_log: Some(log.to_string_lossy().into_owned()),
        ..Settings::default()
    };
    let app = app_with(&url, None, settings);
    st.updates.lock().unwrap().extend([
        update(950, 95, 555, 555, "明天公司团建去哪"),
        update(951, 96, 555, 555, "4090 能跑 70B 吗"),
    ]);
    poll_through(&app, &st, 951).await;
    assert_eq!(sent(&st).len(), 2, "both are answered");
    app.chat.misses.flush();
    let report = crate::support::report(&log);
    assert!(
        report.starts_with("1 distinct unanswered questions"),
        "{report}"
    );
    assert!(report.contains("明天公司团建去哪"), "{report}");
    let line = std::fs::read_to_string(&log).unwrap();
    assert!(line.contains("\"channel\":\"telegram\""), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An update whose bold entity starts inside the surrogate pair of "😀" (offset 1,
/// length 2 in UTF-16 units): teloxide's own entity parsing panics on it.
fn poison_update(update_id: i64, message_id: i64, chat: i64) -> Value {
    let mut u = update(update_id, message_id, chat, chat, "😀 hi");
    u["message"]["entities"] = json!([{"type": "bold", "offset": 1, "length": 2}]);
    u
}

#[tokio::test]
async fn a_poison_update_does_not_stop_polling() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.updates.lock().unwrap().extend([
        poison_update(1000, 101, 777),
        update(1001, 102, 777, 777, "T4 多少钱"),
    ]);
    poll_through(&app, &st, 1001).await;
    let sent = sent(&st);
    assert!(
        sent.iter()
            .any(|m| m["reply_parameters"]["message_id"] == json!(102)),
        "the update after the poison one is answered: {sent:#?}"
    );
    assert_eq!(
        app.chat
            .store
            .setting(telegram::OFFSET_KEY)
            .await
            .unwrap()
            .as_deref(),
        Some("1002"),
        "the offset moved past both"
    );
    let metrics = app.chat.metrics.render();
    assert!(
        metrics.contains("gpu_advisor_updates_dropped_total{channel=\"telegram\"} 0\n"),
        "the entity is ignored, not the update: {metrics}"
    );
}

#[test]
fn bad_entity_offsets_are_ignored() {
    let u: teloxide::types::Update =
        serde_json::from_str(&poison_update(1, 1, 42).to_string()).expect("an update");
    let m = telegram::inbound(
        &u,
        "gpu_advisor_bot",
        teloxide::types::UserId(BOT_ID as u64),
    )
    .expect("a question");
    assert_eq!(m.text, "😀 hi");
    for (offset, length) in [(0, 1), (4, 99), (usize::MAX, 2), (2, usize::MAX)] {
        let mut u = update(2, 2, 42, 42, "@gpu_advisor_bot 😀 hi");
        u["message"]["entities"] = json!([{"type": "mention", "offset": offset, "length": length}]);
        let u: teloxide::types::Update = serde_json::from_str(&u.to_string()).expect("an update");
        let m = telegram::inbound(
            &u,
            "gpu_advisor_bot",
            teloxide::types::UserId(BOT_ID as u64),
        );
        assert!(m.is_some(), "{offset} {length}");
    }
}

#[tokio::test]
async fn a_reply_whose_answer_is_garbled_is_not_sent_twice() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    // Telegram delivered the message; its 200 answer was cut short on the way back.
    st.garble_sends.store(1, Ordering::SeqCst);
    st.updates
        .lock()
        .unwrap()
        .push(update(1100, 111, 888, 888, "4090 能跑 70B 吗"));
    poll_through(&app, &st, 1100).await;
    assert_eq!(st.send_attempts.load(Ordering::SeqCst), 1);
    assert_eq!(sent(&st).len(), 1, "{:#?}", sent(&st));
}

#[tokio::test]
async fn a_webhook_replica_started_during_an_api_outage_comes_up_when_it_ends() {
    let (url, st) = fake().await;
    let app = app(
        &url,
        Some(("https://bot.example.test/telegram/webhook", Some("s3cret"))),
    );
    // getMe fails until the outage ends below.
    st.fail_get_me.store(1_000_000, Ordering::SeqCst);
    let router = start_webhook(&app).await;
    let (listener, base) = crate::support::listener().await;
    tokio::spawn(server::serve(
        listener,
        app.router(vec![router]),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let deliver = || {
        client
            .post(format!("{base}/telegram/webhook"))
            .header("content-type", "application/json")
            .header("X-Telegram-Bot-Api-Secret-Token", "s3cret")
            .body(update(1200, 121, 4343, 4343, "T4 多少钱").to_string())
            .send()
    };
    let readyz = || client.get(format!("{base}/readyz")).send();
    // getMe is still failing: the route exists but is not ready, nor is the replica.
    assert_eq!(deliver().await.unwrap().status(), 503);
    assert_eq!(readyz().await.unwrap().status(), 503);
    let forged = client
        .post(format!("{base}/telegram/webhook"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401, "the secret is checked first");
    assert_eq!(
        client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert!(sent(&st).is_empty());
    wait_for("getMe tried again", Duration::from_secs(10), || {
        st.methods
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == "getme")
            .count()
            >= 3
    })
    .await;
    assert_eq!(readyz().await.unwrap().status(), 503);
    assert_eq!(deliver().await.unwrap().status(), 503);
    // The Bot API is back.
    st.fail_get_me.store(0, Ordering::SeqCst);
    wait_for("the start-up calls", Duration::from_secs(20), || {
        app.readiness.pending().is_empty()
    })
    .await;
    assert_eq!(readyz().await.unwrap().status(), 200);
    assert_eq!(st.webhooks.lock().unwrap().len(), 1);
    assert_eq!(deliver().await.unwrap().status(), 200);
    wait_for("the reply", Duration::from_secs(10), || {
        !sent(&st).is_empty()
    })
    .await;
    let methods = st.methods.lock().unwrap().clone();
    let at = |name: &str| methods.iter().position(|m| m == name).expect(name);
    assert!(at("setmycommands") < at("setwebhook"), "{methods:?}");
}

#[tokio::test]
async fn webhook_mode_without_a_secret_does_not_start() {
    let (url, _st) = fake().await;
    let app = app(
        &url,
        Some(("https://bot.example.test/telegram/webhook", None)),
    );
    let started = telegram::start(
        &app.chat,
        app.settings.telegram.as_ref().expect("telegram settings"),
        app.readiness.part("telegram"),
        std::future::pending(),
    )
    .await;
    let Err(e) = started else {
        panic!("webhook mode started without a secret")
    };
    assert!(e.contains("TELEGRAM_WEBHOOK_SECRET"), "{e}");
}

#[tokio::test]
async fn polling_is_ready_once_get_me_works() {
    let (url, st) = fake().await;
    let app = app(&url, None);
    st.fail_get_me.store(2, Ordering::SeqCst);
    let tg = app.settings.telegram.clone().expect("telegram settings");
    let ready = app.readiness.part("telegram");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(telegram::run_polling(app.chat.clone(), tg, ready, async {
        let _ = rx.await;
    }));
    assert_eq!(app.readiness.pending(), ["telegram"]);
    wait_for("ready", Duration::from_secs(20), || {
        app.readiness.pending().is_empty()
    })
    .await;
    assert_eq!(st.fail_get_me.load(Ordering::SeqCst), 0);
    tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("polling stops at shutdown")
        .unwrap();
}
