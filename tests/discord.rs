//! The Discord adapter over real HTTP on 127.0.0.1: the interactions endpoint (Ed25519
//! signatures, freshness, PING, each slash command, malformed JSON), the gateway message
//! path through the neutral layer, and the REST send path and command registration
//! against a fake Discord API.

use ed25519_dalek::{Signer, SigningKey};
use gpu_advisor::advisor::reply::Block;
use gpu_advisor::app::{Outcome, Silence};
use gpu_advisor::config::Settings;
use gpu_advisor::discord;
use gpu_advisor::server::{self, Services};
use serenity::all::{ApplicationId, ChannelId, Message, MessageId, UserId};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const T: Duration = Duration::from_secs(20);
const BOT_ID: u64 = 900_000_000_000_000_001;
const USER_ID: u64 = 800_000_000_000_000_002;

fn signing_key() -> SigningKey {
    SigningKey::from_bytes(&[7u8; 32])
}

fn public_hex() -> String {
    hex::encode(signing_key().verifying_key().to_bytes())
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn advisor() -> gpu_advisor::advisor::Advisor {
    gpu_advisor::data::embedded()
}

fn services() -> Services {
    Services::build(advisor(), Settings::default()).expect("services")
}

/// Serves the interactions endpoint of `s` on a free port, inside the server's router
/// and its layers, as `serve` does; returns the server's base URL.
async fn serve_interactions_of(s: &Services) -> String {
    let routes = discord::interactions_routes(&s.chat, &s.settings.console_url, &public_hex())
        .expect("router");
    let (listener, base) = crate::support::listener().await;
    tokio::spawn(server::serve(
        listener,
        s.router(vec![routes]),
        std::future::pending(),
    ));
    base
}

/// Serves the interactions endpoint; returns its URL.
async fn serve_interactions() -> String {
    format!(
        "{}/discord/interactions",
        serve_interactions_of(&services()).await
    )
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(T)
        .no_proxy()
        .build()
        .unwrap()
}

fn sign(ts: &str, body: &str) -> String {
    let mut msg = ts.as_bytes().to_vec();
    msg.extend_from_slice(body.as_bytes());
    hex::encode(signing_key().sign(&msg).to_bytes())
}

async fn post_signed(url: &str, body: &str, ts: i64) -> (u16, serde_json::Value) {
    let ts = ts.to_string();
    let r = client()
        .post(url)
        .header("content-type", "application/json")
        .header("x-signature-ed25519", sign(&ts, body))
        .header("x-signature-timestamp", &ts)
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

fn command_body(id: &str, name: &str, options: &[(&str, &str)]) -> String {
    let opts: Vec<_> = options
        .iter()
        .map(|(n, v)| serde_json::json!({"name": n, "type": 3, "value": v}))
        .collect();
    serde_json::json!({
        "id": id, "application_id": "123", "type": 2, "token": "tok", "version": 1,
        "guild_id": "555", "channel_id": "666",
        "member": {"user": {"id": "777", "username": "asker"}},
        "data": {"id": "1", "name": name, "type": 1, "options": opts},
    })
    .to_string()
}

async fn command(url: &str, id: &str, name: &str, options: &[(&str, &str)]) -> serde_json::Value {
    let (status, v) = post_signed(url, &command_body(id, name, options), now()).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["type"], 4, "{v}");
    v
}

#[tokio::test]
async fn auto_answer_is_switched_by_members_with_manage_server_only() {
    let url = serve_interactions().await;
    let auto = |id: &str, permissions: &str| {
        let mut v: serde_json::Value =
            serde_json::from_str(&command_body(id, "auto", &[("enabled", "on")])).unwrap();
        v["member"]["permissions"] = serde_json::json!(permissions);
        v.to_string()
    };
    // SEND_MESSAGES | VIEW_CHANNEL only.
    let (status, v) = post_signed(&url, &auto("91", "3072"), now()).await;
    assert_eq!(status, 200, "{v}");
    assert!(content(&v).contains("Only group admins"), "{v}");
    // MANAGE_GUILD.
    let (_, v) = post_signed(&url, &auto("92", "32"), now()).await;
    assert!(content(&v).contains("Auto-answer is on"), "{v}");
}

fn content(v: &serde_json::Value) -> &str {
    v["data"]["content"].as_str().unwrap_or("")
}

#[tokio::test]
async fn ping_gets_pong() {
    tokio::time::timeout(T, async {
        let url = serve_interactions().await;
        let (status, v) = post_signed(&url, r#"{"type":1,"id":"1","token":"t"}"#, now()).await;
        assert_eq!(status, 200);
        assert_eq!(v, serde_json::json!({"type": 1}));
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn the_endpoint_gets_request_ids_and_request_metrics() {
    tokio::time::timeout(T, async {
        let s = services();
        let base = serve_interactions_of(&s).await;
        let url = format!("{base}/discord/interactions");
        let ping = r#"{"type":1,"id":"1","token":"t"}"#;
        let (status, _) = post_signed(&url, ping, now()).await;
        assert_eq!(status, 200);
        let unsigned = client()
            .post(&url)
            .header("content-type", "application/json")
            .header("x-request-id", "ticket-7")
            .body(ping)
            .send()
            .await
            .expect("request");
        assert_eq!(unsigned.status(), 401);
        assert_eq!(unsigned.headers()["x-request-id"], "ticket-7");
        let metrics = client()
            .get(format!("{base}/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .unwrap();
        for series in [
            "gpu_advisor_http_requests_total{route=\"/discord/interactions\",status=\"200\"} 1\n",
            "gpu_advisor_http_requests_total{route=\"/discord/interactions\",status=\"401\"} 1\n",
        ] {
            assert!(metrics.contains(series), "{series} in {metrics}");
        }
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn bad_missing_and_stale_signatures_are_401() {
    tokio::time::timeout(T, async {
        let url = serve_interactions().await;
        let body = r#"{"type":1}"#;
        let ts = now().to_string();
        // Signed by another key.
        let other = SigningKey::from_bytes(&[9u8; 32]);
        let mut msg = ts.as_bytes().to_vec();
        msg.extend_from_slice(body.as_bytes());
        let bad = hex::encode(other.sign(&msg).to_bytes());
        let r = client()
            .post(&url)
            .header("x-signature-ed25519", bad)
            .header("x-signature-timestamp", &ts)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);
        // A good signature over another body.
        let r = client()
            .post(&url)
            .header("x-signature-ed25519", sign(&ts, body))
            .header("x-signature-timestamp", &ts)
            .body(r#"{"type":2}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);
        // Not hex.
        let r = client()
            .post(&url)
            .header("x-signature-ed25519", "zz")
            .header("x-signature-timestamp", &ts)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);
        // Missing headers.
        let r = client().post(&url).body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401);
        let r = client()
            .post(&url)
            .header("x-signature-ed25519", sign(&ts, body))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 401);
        // Stale (validly signed, six minutes old) and from the future.
        let (status, v) = post_signed(&url, body, now() - 360).await;
        assert_eq!(status, 401, "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("stale"));
        let (status, _) = post_signed(&url, body, now() + 360).await;
        assert_eq!(status, 401);
        // Within the window.
        let (status, _) = post_signed(&url, body, now() - 200).await;
        assert_eq!(status, 200);
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn malformed_json_is_400() {
    tokio::time::timeout(T, async {
        let url = serve_interactions().await;
        let (status, v) = post_signed(&url, r#"{"type":2,"data":"#, now()).await;
        assert_eq!(status, 400, "{v}");
        assert_eq!(v["error"]["code"], "bad_json");
        let (status, _) = post_signed(&url, r#"{"type":2}"#, now()).await;
        assert_eq!(status, 400);
        let (status, _) = post_signed(&url, r#"{"type":99}"#, now()).await;
        assert_eq!(status, 400);
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn slash_commands_answer_with_markdown_and_embed() {
    tokio::time::timeout(T, async {
        let url = serve_interactions().await;

        let v = command(&url, "1001", "gpu", &[("question", "4090 能跑 70B 吗")]).await;
        let c = content(&v);
        assert!(c.contains("4090"), "{c}");
        assert!(c.chars().count() <= 2000);
        let fields = v["data"]["embeds"][0]["fields"]
            .as_array()
            .expect("embed fields");
        assert!(fields.iter().any(|f| f["name"] == "显存估算"), "{v}");
        assert!(fields
            .iter()
            .all(|f| f["value"].as_str().unwrap().chars().count() <= 1024));
        assert!(v["data"]["embeds"][0]["title"].is_string());

        let v = command(&url, "1002", "price", &[("card", "a100-40g")]).await;
        assert!(content(&v).contains("2,800"), "{v}");

        let v = command(&url, "1003", "faq", &[("topic", "nvlink")]).await;
        assert!(content(&v).contains("NVLink"), "{v}");

        let v = command(
            &url,
            "1004",
            "compare",
            &[("a", "rtx4090"), ("b", "a100-40g")],
        )
        .await;
        let c = content(&v);
        assert!(c.contains("4090") && c.contains("A100"), "{c}");

        // The same interaction delivered twice is answered once.
        let v = command(
            &url,
            "1004",
            "compare",
            &[("a", "rtx4090"), ("b", "a100-40g")],
        )
        .await;
        assert_eq!(v["data"]["flags"], 64, "{v}");

        // A command we do not have: an ephemeral hint.
        let v = command(&url, "1005", "nope", &[]).await;
        assert_eq!(v["data"]["flags"], 64, "{v}");
    })
    .await
    .expect("timeout");
}

#[test]
fn command_definitions_have_catalog_choices() {
    let adv = advisor();
    let defs = discord::command_definitions(&adv.catalog);
    let cmds = defs.as_array().unwrap();
    let names: Vec<_> = cmds.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["gpu", "price", "faq", "compare", "auto"]);
    assert_eq!(cmds[4]["default_member_permissions"], "32", "Manage Server");
    assert_eq!(cmds[4]["dm_permission"], false);
    let choices = |cmd: usize, opt: usize| -> Vec<String> {
        cmds[cmd]["options"][opt]["choices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["value"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(choices(1, 0).contains(&"a100-40g".to_string()));
    assert!(choices(2, 0).contains(&"nvlink".to_string()));
    assert!(choices(3, 0).contains(&"rtx4090".to_string()));
    assert!(choices(3, 1).contains(&"a100-40g".to_string()));
    for c in cmds {
        for o in c["options"].as_array().unwrap() {
            if let Some(ch) = o["choices"].as_array() {
                assert!(!ch.is_empty() && ch.len() <= 25);
                assert!(ch
                    .iter()
                    .all(|x| x["name"].as_str().unwrap().chars().count() <= 100));
            }
        }
    }
}

// -------------------------------------------------------------------------------------
// Gateway messages

fn user(id: u64, name: &str, bot: bool) -> serde_json::Value {
    serde_json::json!({"id": id.to_string(), "username": name, "discriminator": "0",
        "global_name": null, "avatar": null, "bot": bot})
}

fn message_json(
    id: u64,
    content: &str,
    guild: bool,
    mentions: &[serde_json::Value],
) -> serde_json::Value {
    let mut m = serde_json::json!({
        "id": id.to_string(), "channel_id": "4242", "author": user(USER_ID, "asker", false),
        "content": content, "timestamp": "2024-05-01T12:00:00.000000+00:00",
        "edited_timestamp": null, "tts": false, "mention_everyone": false,
        "mentions": mentions, "mention_roles": [], "attachments": [], "embeds": [],
        "pinned": false, "type": 0,
    });
    if guild {
        m["guild_id"] = "5151".into();
    }
    m
}

fn message(v: serde_json::Value) -> Message {
    serde_json::from_value(v).expect("a serenity Message")
}

#[tokio::test]
async fn gateway_messages_go_through_the_chat_layer() {
    tokio::time::timeout(T, async {
        let chat = services().chat;
        let bot = UserId::new(BOT_ID);

        // A guild message that mentions the bot.
        let m = message(message_json(
            1,
            &format!("<@{BOT_ID}> 4090 能跑 70B 吗"),
            true,
            &[user(BOT_ID, "GpuBot", true)],
        ));
        let inbound = discord::inbound_from_message(&m, bot).expect("inbound");
        assert!(inbound.group && inbound.mentions_bot && !inbound.replies_to_bot);
        assert_eq!(inbound.text, "4090 能跑 70B 吗");
        assert_eq!(inbound.chat, "4242");
        assert_eq!(inbound.user, USER_ID.to_string());
        match chat.handle(&inbound).await {
            Outcome::Answer(a) => {
                assert!(a.answer.estimate.is_some());
                let r = discord::render_answer(&a.answer);
                assert!(r.parts[0].contains("4090"));
                assert!(!r.fields.is_empty());
            }
            other => panic!("{other:?}"),
        }

        // A guild message without a mention is not ours.
        let m = message(message_json(2, "4090 能跑 70B 吗", true, &[]));
        let inbound = discord::inbound_from_message(&m, bot).unwrap();
        assert!(!inbound.mentions_bot);
        assert!(matches!(
            chat.handle(&inbound).await,
            Outcome::Silent(Silence::NotAddressed)
        ));

        // A reply to the bot's message is.
        let mut v = message_json(3, "那 INT4 呢", true, &[]);
        let mut prev = message_json(2, "answer", true, &[]);
        prev["author"] = user(BOT_ID, "GpuBot", true);
        v["referenced_message"] = prev;
        let inbound = discord::inbound_from_message(&message(v), bot).unwrap();
        assert!(inbound.replies_to_bot);
        assert!(matches!(chat.handle(&inbound).await, Outcome::Answer(_)));

        // A direct message needs no mention.
        let m = message(message_json(4, "a100-40g 多少钱", false, &[]));
        let inbound = discord::inbound_from_message(&m, bot).unwrap();
        assert!(!inbound.group);
        match chat.handle(&inbound).await {
            Outcome::Answer(a) => assert!(a.answer.reply().contains("2,800")),
            other => panic!("{other:?}"),
        }

        // Bots (ourselves included) are ignored.
        let mut v = message_json(5, "hi", true, &[]);
        v["author"] = user(BOT_ID, "GpuBot", true);
        assert!(discord::inbound_from_message(&message(v), bot).is_none());
        let mut v = message_json(6, "hi", true, &[]);
        v["author"] = user(12345, "other", true);
        assert!(discord::inbound_from_message(&message(v), bot).is_none());
    })
    .await
    .expect("timeout");
}

// -------------------------------------------------------------------------------------
// REST send path against a fake Discord API

type Recorded = Arc<Mutex<Vec<(String, serde_json::Value)>>>;

async fn fake_discord() -> (String, Recorded) {
    use axum::extract::{Path, State};
    let rec: Recorded = Arc::default();
    let router = axum::Router::new()
        .route(
            "/api/v10/channels/:id/messages",
            axum::routing::post(
                |State(rec): State<Recorded>,
                 Path(id): Path<String>,
                 axum::Json(body): axum::Json<serde_json::Value>| async move {
                    let n = {
                        let mut r = rec.lock().unwrap();
                        r.push((id.clone(), body.clone()));
                        r.len() as u64
                    };
                    let mut m = message_json(
                        10_000 + n,
                        body["content"].as_str().unwrap_or(""),
                        false,
                        &[],
                    );
                    m["channel_id"] = id.into();
                    m["author"] = user(BOT_ID, "GpuBot", true);
                    axum::Json(m)
                },
            ),
        )
        .route(
            "/api/v10/applications/:id/commands",
            axum::routing::put(
                |State(rec): State<Recorded>,
                 Path(id): Path<String>,
                 axum::Json(body): axum::Json<serde_json::Value>| async move {
                    rec.lock().unwrap().push((format!("commands:{id}"), body));
                    axum::Json(serde_json::json!([]))
                },
            ),
        )
        .with_state(Arc::clone(&rec));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}"), rec)
}

#[tokio::test]
async fn send_reply_splits_long_answers_against_a_fake_api() {
    tokio::time::timeout(T, async {
        let (base, rec) = fake_discord().await;
        let http = discord::http_client("test-token", Some(&base));
        let adv = advisor();
        let (mut answer, _) = adv.answer("4090 能跑 70B 吗", &Default::default());
        // Make it longer than one Discord message.
        let filler: Vec<String> = (0..120)
            .map(|i| format!("line {i}: a long explanation of the memory bill"))
            .collect();
        answer.rendered.blocks.push(Block::Bullets(filler));
        discord::send_reply(&http, ChannelId::new(4242), MessageId::new(77), &answer)
            .await
            .expect("sent");
        let rec = rec.lock().unwrap().clone();
        assert!(rec.len() >= 2, "{} parts", rec.len());
        for (i, (channel, body)) in rec.iter().enumerate() {
            assert_eq!(channel, "4242");
            let c = body["content"].as_str().unwrap();
            assert!(!c.is_empty() && c.chars().count() <= 2000, "part {i}");
            if i == 0 {
                assert_eq!(body["message_reference"]["message_id"], "77", "{body}");
                let fields = body["embeds"][0]["fields"].as_array().expect("embed");
                assert!(!fields.is_empty());
                assert!(c.contains("4090"));
            } else {
                assert!(body.get("message_reference").is_none_or(|v| v.is_null()));
                assert!(body
                    .get("embeds")
                    .is_none_or(|v| v.as_array().is_none_or(|a| a.is_empty())));
            }
        }
        let all: String = rec
            .iter()
            .map(|(_, b)| b["content"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        // Nothing lost between the parts (the core itself cuts at 4000 characters).
        let md = gpu_advisor::render::discord_markdown(&answer.rendered);
        let squash = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squash(&all), squash(&md));
        assert!(all.contains("line 60:"));
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn commands_follow_catalog_reloads_and_unchanged_ones_are_not_sent_again() {
    // The three catalogs are built before the clock starts: building one compiles every
    // pattern, seconds each in a debug build on a busy machine.
    let (first, same, mut renamed) = (advisor(), advisor(), advisor());
    tokio::time::timeout(T, async {
        let (base, rec) = fake_discord().await;
        let http = Arc::new(discord::http_client("test-token", Some(&base)));
        http.set_application_id(ApplicationId::new(4321));
        let live = Arc::new(gpu_advisor::app::Live::new(first));
        let sync = Arc::new(discord::CommandSync::default());
        assert!(sync.sync(&http, &live.get().catalog).await.expect("sent"));
        // A reconnect (`ready` again) with the same catalog: nothing to send.
        assert!(!sync.sync(&http, &live.get().catalog).await.expect("kept"));
        tokio::spawn(Arc::clone(&sync).follow(Arc::clone(&http), &live));
        // A reload that leaves every choice as it was.
        live.replace(same);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            rec.lock().unwrap().len(),
            1,
            "an unchanged reload sent nothing"
        );
        // A reload that renames an offer: the commands go again, with the new choice.
        renamed.catalog.offers[0].name_en = "Renamed offer".into();
        let id = renamed.catalog.offers[0].id.clone();
        live.replace(renamed);
        while rec.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let rec = rec.lock().unwrap().clone();
        assert_eq!(rec.len(), 2);
        assert!(rec.iter().all(|(route, _)| route == "commands:4321"));
        let price_choices = |defs: &serde_json::Value| {
            let price = defs
                .as_array()
                .expect("commands")
                .iter()
                .find(|c| c["name"] == "price")
                .expect("/price")
                .clone();
            price["options"][0]["choices"].clone()
        };
        let named = |defs: &serde_json::Value| {
            price_choices(defs)
                .as_array()
                .expect("choices")
                .iter()
                .find(|c| c["value"] == id.as_str())
                .map(|c| c["name"].clone())
        };
        assert_ne!(named(&rec[0].1), Some("Renamed offer".into()));
        assert_eq!(named(&rec[1].1), Some("Renamed offer".into()));
    })
    .await
    .expect("timeout");
}

#[test]
fn verifier_rejects_bad_keys() {
    assert!(discord::Verifier::new("nothex").is_err());
    assert!(discord::Verifier::new("abcd").is_err());
    let v = discord::Verifier::new(&public_hex()).unwrap();
    let ts = "1700000000";
    let body = br#"{"type":1}"#;
    let mut msg = ts.as_bytes().to_vec();
    msg.extend_from_slice(body);
    let sig = hex::encode(signing_key().sign(&msg).to_bytes());
    assert!(v.verify(Some(&sig), Some(ts), body, 1_700_000_100).is_ok());
    assert_eq!(
        v.verify(Some(&sig), Some(ts), body, 1_700_000_400),
        Err("stale timestamp")
    );
    assert!(v.verify(None, Some(ts), body, 1_700_000_000).is_err());
}

#[tokio::test]
async fn start_serves_the_endpoint_only_when_configured() {
    tokio::time::timeout(T, async {
        let chat = services().chat;
        let url = "https://console.example/";
        let none = discord::start(&chat, &Default::default(), url, std::future::pending())
            .await
            .unwrap();
        assert!(
            none.is_none(),
            "neither a public key nor a token: nothing to serve"
        );
        let d = gpu_advisor::config::Discord {
            token: None,
            api_url: None,
            public_key: Some(public_hex()),
        };
        assert!(discord::start(&chat, &d, url, std::future::pending())
            .await
            .unwrap()
            .is_some());
        let d = gpu_advisor::config::Discord {
            public_key: Some("not-a-key".into()),
            ..Default::default()
        };
        assert!(discord::start(&chat, &d, url, std::future::pending())
            .await
            .is_err());
    })
    .await
    .expect("timeout");
}

#[tokio::test]
async fn a_gateway_question_the_bot_cannot_answer_reaches_the_misses_log_and_the_report() {
    let dir = crate::support::temp_dir("discord-misses");
    let log = dir.join("unanswered.jsonl");
    let settings = Settings {
        unanswered_log: Some(log.to_string_lossy().into_owned()),
        ..Settings::default()
    };
    let chat = Services::build(advisor(), settings).expect("services").chat;
    let bot = UserId::new(BOT_ID);
    let m = message(message_json(
        11,
        &format!("<@{BOT_ID}> 明天公司团建去哪"),
        true,
        &[user(BOT_ID, "GpuBot", true)],
    ));
    let inbound = discord::inbound_from_message(&m, bot).expect("inbound");
    assert!(matches!(chat.handle(&inbound).await, Outcome::Answer(_)));
    chat.misses.flush();
    let report = crate::support::report(&log);
    assert!(report.contains("明天公司团建去哪"), "{report}");
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("\"channel\":\"discord\""));
    let _ = std::fs::remove_dir_all(&dir);
}
