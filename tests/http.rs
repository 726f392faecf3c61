//! The HTTP server, really started on 127.0.0.1 with a real client: `/v1/ask` and its
//! auth and errors, metrics, the OpenAPI document against real responses, and WeCom's
//! callback with Tencent's published sample vectors, our own round trips, retries and
//! the group-robot push (to a fake robot server on 127.0.0.1).

use gpu_advisor::config::{Secret, Settings, Wecom};
use gpu_advisor::data;
use gpu_advisor::http::auth;
use gpu_advisor::server::{self, Services};
use gpu_advisor::wecom::callback::UNDECRYPTABLE;
use gpu_advisor::wecom::{parse_reply_envelope, WecomCrypto};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::wecom_vectors::{
    AES_KEY, CORP_ID, MSG_ENCRYPT, MSG_NONCE, MSG_SIG, MSG_TS, TOKEN,
};

struct Server {
    base: String,
    _rt: tokio::runtime::Runtime,
    client: reqwest::blocking::Client,
}

fn start(settings: Settings) -> Server {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let services = Services::build(data::embedded(), settings).expect("services");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    rt.spawn(server::serve(
        listener,
        services.router(Vec::new()),
        std::future::pending(),
    ));
    Server {
        base: format!("http://{addr}"),
        _rt: rt,
        client: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client"),
    }
}

impl Server {
    fn get(&self, path: &str) -> reqwest::blocking::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .expect("GET")
    }
    fn ask(&self, body: &str, headers: &[(&str, &str)]) -> reqwest::blocking::Response {
        let mut r = self
            .client
            .post(format!("{}/v1/ask", self.base))
            .body(body.to_string());
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.send().expect("POST")
    }
}

const JSON: (&str, &str) = ("content-type", "application/json");

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

#[test]
fn health_metrics_console_and_errors() {
    let s = start(Settings::default());
    assert_eq!(s.get("/healthz").text().expect("body"), "ok");
    assert_eq!(
        s.get("/readyz").text().expect("body"),
        "ready",
        "no chat adapter configured: ready at once"
    );
    let m = s.get("/metrics").text().expect("body");
    for name in [
        "gpu_advisor_questions_total{channel=\"telegram\",intent=\"recommend\"} 0",
        "gpu_advisor_unanswered_total{channel=\"wecom\"} 0",
        "gpu_advisor_duplicates_total{channel=\"discord\"} 0",
        "gpu_advisor_reply_seconds_count 0",
        "gpu_advisor_http_requests_total{route=\"/healthz\",status=\"200\"}",
    ] {
        assert!(m.contains(name), "{name} missing from\n{m}");
    }
    let page = s.get("/").text().expect("body");
    assert!(page.contains("/v1/ask") && page.contains("id=\"prices\""));
    let nf = s.get("/nope");
    assert_eq!(nf.status(), 404);
    assert_eq!(
        nf.json::<Value>().expect("json")["error"]["code"],
        "not_found"
    );

    let r = s.ask(r#"{"text":"4090 能跑 70B 吗"}"#, &[JSON]);
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("x-request-id"));
    assert_eq!(
        r.json::<Value>().expect("json")["verdict"]["gpu"],
        "rtx4090"
    );

    let r = s.ask(r#"{"text":"hi"}"#, &[("content-type", "text/plain")]);
    assert_eq!(r.status(), 415);
    let r = s.ask(r#"{"text": 5}"#, &[JSON]);
    assert_eq!(r.status(), 400);
    let msg = r.json::<Value>().expect("json")["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(msg.contains("line 1 column"), "{msg}");
    let r = s.ask(r#"{"text": "#, &[JSON]);
    assert_eq!(r.status(), 400);
    let big = format!(r#"{{"text":"{}"}}"#, "a".repeat(70 * 1024));
    let r = s.ask(&big, &[JSON]);
    assert_eq!(r.status(), 413);
    assert_eq!(
        r.json::<Value>().expect("json")["error"]["code"],
        "payload_too_large"
    );
    let m = s.get("/metrics").text().expect("body");
    assert!(
        m.contains("gpu_advisor_questions_total{channel=\"http\",intent=\"feasibility\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("gpu_advisor_http_requests_total{route=\"/v1/ask\",status=\"415\"} 1"),
        "{m}"
    );
}

#[test]
fn conversations_continue_by_id() {
    let s = start(Settings::default());
    let turn = |text: &str, id: &str| {
        s.ask(
            &json!({"text": text, "conversation": id}).to_string(),
            &[JSON],
        )
        .json::<Value>()
        .expect("json")
    };
    turn("3090 能跑 13B 吗", "c1");
    let a = turn("INT4 呢", "c1");
    assert_eq!(a["verdict"]["fits"], true);
    assert_eq!(a["workload"]["precision"], "int4");
    let other = turn("INT4 呢", "c2");
    assert!(other["verdict"].is_null());
}

#[test]
fn serving_answers_users_speed_and_context() {
    let s = start(Settings::default());
    let ask = |text: &str, id: Option<&str>| -> Value {
        let body = match id {
            Some(id) => json!({"text": text, "conversation": id}),
            None => json!({"text": text}),
        };
        s.ask(&body.to_string(), &[JSON]).json().expect("json")
    };
    // Daily users: 5 % at once (DOMAIN.md §8), carried by enough copies, priced in total.
    let a = ask("想用 vLLM 部署 Qwen3-32B，日活 2000 人", Some("s1"));
    let sv = &a["serving"];
    assert_eq!(sv["engine"], "vllm");
    assert_eq!(sv["concurrency"], 100.0);
    assert_eq!(a["workload"]["concurrency"], 100);
    let replicas = sv["replicas"].as_u64().expect("replicas");
    assert!(replicas >= 1);
    assert!(sv["per_user_tokens_per_s"].as_f64().unwrap() >= 20.0);
    assert!(sv["ttft_s"].as_f64().unwrap() <= 2.0);
    let cards = a["recommendation"]["count"].as_u64().unwrap();
    assert!(cards >= replicas * sv["count"].as_u64().unwrap());
    assert!(a["reply"].as_str().unwrap().contains("--max-num-seqs"));
    // A follow-up keeps the load and changes the engine.
    let b = ask("换成 SGLang 呢", Some("s1"));
    assert_eq!(b["serving"]["engine"], "sglang");
    assert_eq!(b["serving"]["concurrency"], 100.0);
    // How fast on the named cards: only those cards, with the cost of splitting.
    let one = ask("Qwen2.5-72B on 2 × A100 80G, tokens per second?", None);
    let two = ask("Qwen2.5-72B on 4 × A100 80G, tokens per second?", None);
    let (d2, d4) = (
        one["serving"]["decode_tokens_per_s"].as_f64().unwrap(),
        two["serving"]["decode_tokens_per_s"].as_f64().unwrap(),
    );
    assert_eq!(one["serving"]["count"], 2);
    assert!(
        d2 > 10.0 && d2 < 25.0 && d4 > d2 && d4 < 2.0 * d2,
        "{d2} {d4}"
    );
    assert_eq!(one["estimate"]["decode_tokens_per_s"], d2);
    // The longest context on a named card, and training has no serving object.
    let c = ask(
        "用 llama.cpp 跑 Qwen2.5-7B Q4_K_M，一张 4090，最长上下文能开多少？",
        None,
    );
    assert_eq!(c["serving"]["engine"], "llama.cpp");
    assert!(c["serving"]["max_context_tokens"].as_f64().unwrap() >= 16384.0);
    assert!(c["reply"].as_str().unwrap().contains("-ngl"));
    let t = ask("微调 Qwen-14B 要什么卡?", None);
    assert!(t["serving"].is_null());
}

#[test]
fn bearer_tokens_with_rotation() {
    let s = start(Settings {
        api_tokens: vec![Secret::new("old"), Secret::new("new")],
        ..Settings::default()
    });
    let body = r#"{"text":"T4 多少钱"}"#;
    assert_eq!(s.ask(body, &[JSON]).status(), 401);
    assert_eq!(
        s.ask(body, &[JSON, ("authorization", "Bearer nope")])
            .status(),
        401
    );
    assert_eq!(
        s.ask(body, &[JSON, ("authorization", "Bearer old")])
            .status(),
        200
    );
    assert_eq!(
        s.ask(body, &[JSON, ("authorization", "Bearer new")])
            .status(),
        200
    );
}

#[test]
fn hmac_signatures() {
    let s = start(Settings {
        webhook_secrets: vec![Secret::new("s1"), Secret::new("s2")],
        ..Settings::default()
    });
    let body = r#"{"text":"A100 40G 月付多少"}"#;
    let ts = now().to_string();
    let good = auth::sign("s2", &ts, body.as_bytes());
    let r = s.ask(
        body,
        &[JSON, ("x-timestamp", &ts), ("x-signature-256", &good)],
    );
    assert_eq!(r.status(), 200);
    assert!(r.text().expect("body").contains("2,800"));
    // The same signed request again (a replay within the window): refused.
    let again = s.ask(
        body,
        &[JSON, ("x-timestamp", &ts), ("x-signature-256", &good)],
    );
    assert_eq!(again.status(), 409);
    assert!(again.text().expect("body").contains("replayed"));
    // A new request (another timestamp or body) is a new signature: answered.
    let body2 = r#"{"text":"A100 40G 年付多少"}"#;
    let sig2 = auth::sign("s2", &ts, body2.as_bytes());
    let r = s.ask(
        body2,
        &[JSON, ("x-timestamp", &ts), ("x-signature-256", &sig2)],
    );
    assert_eq!(r.status(), 200);
    let bad = auth::sign("s3", &ts, body.as_bytes());
    assert_eq!(
        s.ask(
            body,
            &[JSON, ("x-timestamp", &ts), ("x-signature-256", &bad)]
        )
        .status(),
        401
    );
    let old = (now() - 301).to_string();
    let stale = auth::sign("s1", &old, body.as_bytes());
    let r = s.ask(
        body,
        &[JSON, ("x-timestamp", &old), ("x-signature-256", &stale)],
    );
    assert_eq!(r.status(), 401);
    assert!(r.text().expect("body").contains("300 s"));
    assert_eq!(s.ask(body, &[JSON]).status(), 401);
}

#[test]
fn rate_limit_answers_429_with_retry_after() {
    let s = start(Settings {
        ask_rate_per_min: Some(2),
        ..Settings::default()
    });
    let body = r#"{"text":"hello"}"#;
    assert_eq!(s.ask(body, &[JSON]).status(), 200);
    assert_eq!(s.ask(body, &[JSON]).status(), 200);
    let r = s.ask(body, &[JSON]);
    assert_eq!(r.status(), 429);
    let after: u64 = r.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=30).contains(&after), "{after}");
}

/// A minimal OpenAPI 3.0 schema check: types, required keys, nullable, enums, refs.
fn conforms(doc: &Value, schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return conforms(doc, &doc["components"]["schemas"][name], v, path);
    }
    if v.is_null() {
        return if schema["nullable"] == true {
            Ok(())
        } else {
            Err(format!("{path}: null not allowed"))
        };
    }
    let ok = match schema["type"].as_str() {
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        Some("string") => v.is_string(),
        Some("integer") => v.is_u64() || v.is_i64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        _ => true,
    };
    if !ok {
        return Err(format!("{path}: {v} is not {}", schema["type"]));
    }
    if let Some(e) = schema["enum"].as_array() {
        if !e.contains(v) {
            return Err(format!("{path}: {v} not in enum"));
        }
    }
    for k in schema["required"].as_array().into_iter().flatten() {
        let k = k.as_str().unwrap_or("");
        if v.get(k).is_none() {
            return Err(format!("{path}: missing {k}"));
        }
    }
    if let (Some(props), Some(obj)) = (schema["properties"].as_object(), v.as_object()) {
        for (k, sub) in props {
            if let Some(x) = obj.get(k) {
                conforms(doc, sub, x, &format!("{path}.{k}"))?;
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            conforms(doc, items, x, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

#[test]
fn openapi_describes_the_real_responses() {
    let s = start(Settings::default());
    let doc: Value = s.get("/openapi.json").json().expect("json");
    assert_eq!(doc["openapi"], "3.0.3");
    let answer = json!({"$ref": "#/components/schemas/Answer"});
    let error = json!({"$ref": "#/components/schemas/Error"});
    for q in [
        "微调 Qwen-14B 要什么卡?",
        "4090 能跑 70B 吗",
        "预算三千五能干嘛",
        "A100 和 H100 怎么选",
        "NVLink 是什么",
        "T4 一年多少钱",
        "想用 vLLM 部署 Qwen3-32B，日活 2000 人",
        "",
        "🤔",
    ] {
        let v: Value = s
            .ask(&json!({"text": q}).to_string(), &[JSON])
            .json()
            .expect("json");
        conforms(&doc, &answer, &v, "answer").unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
    for (body, ct) in [("{", "application/json"), ("{}", "text/plain")] {
        let v: Value = s.ask(body, &[("content-type", ct)]).json().expect("json");
        conforms(&doc, &error, &v, "error").unwrap_or_else(|e| panic!("{body}: {e}"));
    }
    for code in ["400", "401", "413", "415", "429"] {
        assert!(
            doc["paths"]["/v1/ask"]["post"]["responses"][code].is_object(),
            "{code}"
        );
    }
}

fn wecom_settings(robot: Option<String>) -> Settings {
    Settings {
        wecom: Some(Wecom {
            token: Secret::new(TOKEN),
            encoding_aes_key: Secret::new(AES_KEY),
            corp_id: CORP_ID.into(),
        }),
        wecom_robot_webhook_url: robot,
        // Lower than WeCom's 2048 so that a normal reply needs a second message.
        wecom_passive_max_bytes: 600,
        ..Settings::default()
    }
}

fn envelope(encrypt: &str) -> String {
    format!("<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName><Encrypt><![CDATA[{encrypt}]]></Encrypt><AgentID><![CDATA[1000002]]></AgentID></xml>")
}

fn post_wecom(
    s: &Server,
    sig: &str,
    ts: &str,
    nonce: &str,
    body: String,
) -> reqwest::blocking::Response {
    let url = format!(
        "{}/wecom/callback?msg_signature={sig}&timestamp={ts}&nonce={nonce}",
        s.base
    );
    s.client.post(url).body(body).send().expect("POST")
}

fn open_reply(c: &WecomCrypto, body: &str) -> String {
    let env = parse_reply_envelope(body).expect("reply envelope");
    c.verify(&env.msg_signature, &env.timestamp, &env.nonce, &env.encrypt)
        .expect("signed");
    c.decrypt(&env.encrypt).expect("decrypts")
}

fn text_message(from: &str, content: &str, msg_id: &str) -> String {
    format!(
        "<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName><FromUserName><![CDATA[{from}]]></FromUserName><CreateTime>1700000000</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{content}]]></Content><MsgId>{msg_id}</MsgId><AgentID>1000002</AgentID></xml>"
    )
}

#[test]
fn wecom_official_vectors_through_the_route() {
    let s = start(wecom_settings(None));
    let echostr =
        "fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhnFyq6SVHyA==";
    let url = format!(
        "{}/wecom/callback?msg_signature=012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb&timestamp=1476416373&nonce=47744683&echostr={}",
        s.base,
        echostr.replace('+', "%2B").replace('/', "%2F").replace('=', "%3D")
    );
    let r = s.client.get(url).send().expect("GET");
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().expect("body"), "1288432023552776189");

    // The sample message (from ChenJiaShun, "你好") is answered with an encrypted reply.
    let r = post_wecom(&s, MSG_SIG, MSG_TS, MSG_NONCE, envelope(MSG_ENCRYPT));
    assert_eq!(r.status(), 200);
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    let reply = open_reply(&c, &r.text().expect("body"));
    assert!(
        reply.contains("<ToUserName><![CDATA[ChenJiaShun]]></ToUserName>"),
        "{reply}"
    );
    assert!(reply.contains("<MsgType><![CDATA[text]]></MsgType>"));
    assert!(reply.contains("GPU"), "{reply}");

    // Bad cases: wrong signature, wrong corp id, malformed XML, oversize body.
    assert_eq!(
        post_wecom(
            &s,
            &"0".repeat(40),
            MSG_TS,
            MSG_NONCE,
            envelope(MSG_ENCRYPT)
        )
        .status(),
        401
    );
    let other = WecomCrypto::new(TOKEN, AES_KEY, "ww0000000000000000").expect("crypto");
    let enc = other.encrypt_with_random(&text_message("u", "hi", "1"), [7; 16]);
    let sig = c.signature("1", "2", &enc);
    let r = post_wecom(&s, &sig, "1", "2", envelope(&enc));
    assert_eq!(
        r.status(),
        400,
        "a wrong corp id is one more decrypt failure"
    );
    assert_eq!(r.text().expect("body"), UNDECRYPTABLE);
    assert_eq!(
        post_wecom(&s, MSG_SIG, MSG_TS, MSG_NONCE, "<xml><Encrypt>".into()).status(),
        400
    );
    assert_eq!(
        post_wecom(&s, MSG_SIG, MSG_TS, MSG_NONCE, "x".repeat(70_000)).status(),
        413
    );
    let bad = post_wecom(&s, &c.signature("1", "2", "!!!"), "1", "2", envelope("!!!"));
    assert_eq!(bad.status(), 400);
}

#[test]
fn wecom_round_trip_and_retry_storm() {
    let s = start(wecom_settings(None));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    let enc = c.encrypt_with_random(
        &text_message("zhangsan", "@GPU助手 4090 能跑 70B 吗", "777"),
        [1; 16],
    );
    let sig = c.signature("1700000001", "42", &enc);
    let first = post_wecom(&s, &sig, "1700000001", "42", envelope(&enc))
        .text()
        .expect("body");
    let reply = open_reply(&c, &first);
    assert!(
        reply.contains("RTX 4090") || reply.contains("4090"),
        "{reply}"
    );
    assert!(
        !reply.contains("**"),
        "passive replies are plain text: {reply}"
    );
    for _ in 0..49 {
        let again = post_wecom(&s, &sig, "1700000001", "42", envelope(&enc))
            .text()
            .expect("body");
        assert_eq!(again, first, "a retry gets the same reply");
    }
    let m = s.get("/metrics").text().expect("body");
    assert!(
        m.contains("gpu_advisor_duplicates_total{channel=\"wecom\"} 49"),
        "{m}"
    );
    assert!(
        m.contains("gpu_advisor_questions_total{channel=\"wecom\",intent=\"feasibility\"} 1"),
        "{m}"
    );
}

#[test]
fn long_wecom_replies_continue_through_the_robot() {
    // A fake group-robot webhook on 127.0.0.1 that records what it receives.
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let robot = format!(
        "http://{}/cgi-bin/webhook/send?key=test",
        listener.local_addr().expect("addr")
    );
    let sink = Arc::clone(&got);
    let fake = axum::Router::new().route(
        "/cgi-bin/webhook/send",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let sink = Arc::clone(&sink);
            async move {
                sink.lock().expect("lock").push(v);
                axum::Json(json!({"errcode": 0, "errmsg": "ok"}))
            }
        }),
    );
    rt.spawn(async move { axum::serve(listener, fake).await });

    let s = start(wecom_settings(Some(robot)));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    let question = "两张 A100 40G 一年多少钱";
    let enc = c.encrypt_with_random(&text_message("lisi", question, "888"), [2; 16]);
    let sig = c.signature("1700000002", "43", &enc);
    let body = post_wecom(&s, &sig, "1700000002", "43", envelope(&enc))
        .text()
        .expect("body");
    let reply = open_reply(&c, &body);
    let content = reply
        .split("<Content><![CDATA[")
        .nth(1)
        .and_then(|r| r.split("]]></Content>").next())
        .expect("content");
    assert!(content.len() <= 600, "{} bytes", content.len());
    let answer = gpu_advisor::advisor::State::default();
    let (full_answer, _) = data::embedded().answer(question, &answer);
    let total = gpu_advisor::render::plain_text(&full_answer.rendered);
    assert!(
        total.len() > 600,
        "the test question must need a second message: {} bytes",
        total.len()
    );
    for _ in 0..50 {
        if !got.lock().expect("lock").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let pushed = got.lock().expect("lock").clone();
    assert!(!pushed.is_empty(), "the rest went to the robot");
    assert_eq!(pushed[0]["msgtype"], "markdown");
    let rest = pushed[0]["markdown"]["content"].as_str().expect("content");
    assert!(rest.len() <= gpu_advisor::wecom::robot::ROBOT_MAX_BYTES);
    assert!(total.contains(rest.lines().next().expect("a line")));
}

#[test]
fn a_wecom_user_who_floods_gets_one_notice_like_every_chat_user() {
    let s = start(wecom_settings(None));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    let mut replies = Vec::new();
    for i in 0..12 {
        let enc = c.encrypt_with_random(
            &text_message("flooder", "T4 多少钱", &format!("9{i:03}")),
            [3; 16],
        );
        let sig = c.signature("1700000001", "43", &enc);
        let body = post_wecom(&s, &sig, "1700000001", "43", envelope(&enc))
            .text()
            .expect("body");
        replies.push(if body == "success" {
            body
        } else {
            open_reply(&c, &body)
        });
    }
    // The chat layer's per-user limit (10 a minute): ten answers, one notice, silence.
    assert!(
        replies[..10].iter().all(|r| r.contains("T4")),
        "{replies:#?}"
    );
    assert!(replies[10].contains("消息有点多"), "{}", replies[10]);
    assert_eq!(replies[11], "success");
    // Another user is not held up.
    let enc = c.encrypt_with_random(&text_message("other", "T4 多少钱", "9999"), [3; 16]);
    let sig = c.signature("1700000001", "43", &enc);
    let body = post_wecom(&s, &sig, "1700000001", "43", envelope(&enc))
        .text()
        .expect("body");
    assert!(open_reply(&c, &body).contains("T4"));
}

/// A server on the embedded data with `limits`, its address, on its own runtime.
fn start_limited(limits: gpu_advisor::config::ServerLimits) -> (tokio::runtime::Runtime, String) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let services = Services::build(data::embedded(), Settings::default()).expect("services");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    rt.spawn(async move {
        server::serve_with(
            listener,
            services.router(Vec::new()),
            &limits,
            std::future::pending(),
        )
        .await
    });
    (rt, addr)
}

/// Writes `parts` with `pause` between them (none after the last), then reads until the server closes or
/// `wait` passes: what came back, and whether the server closed the connection.
fn raw(addr: &str, parts: &[&[u8]], pause: Duration, wait: Duration) -> (String, bool) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(wait)).expect("timeout");
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(pause);
        }
        if s.write_all(p).is_err() {
            break; // the server closed on us: read what it said
        }
    }
    let mut got = Vec::new();
    let closed = match s.read_to_end(&mut got) {
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    };
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

#[test]
fn oversized_slow_and_truncated_requests_are_cut_with_a_clear_status() {
    let limits = gpu_advisor::config::ServerLimits {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        max_header_bytes: 16 * 1024,
        max_connections: 64,
    };
    let (_rt, addr) = start_limited(limits);
    let long = Duration::from_secs(5);
    // Headers over the limit: 431, closed.
    let big = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n",
        "a".repeat(64 * 1024)
    );
    let (got, closed) = raw(&addr, &[big.as_bytes()], Duration::ZERO, long);
    assert!(got.starts_with("HTTP/1.1 431"), "{got}");
    assert!(closed);
    // Headers trickled past the header timeout: closed without an answer.
    let t0 = std::time::Instant::now();
    let (got, closed) = raw(
        &addr,
        &[b"GET /healthz HTTP/1.1\r\n", b"Host: x\r\n", b"X-A: 1\r\n"],
        Duration::from_millis(700),
        long,
    );
    assert!(closed && !got.contains("200 OK"), "{got}");
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    // An idle keep-alive connection is closed after the same timeout.
    let (got, closed) = raw(
        &addr,
        &[b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"],
        Duration::ZERO,
        long,
    );
    assert!(got.starts_with("HTTP/1.1 200") && closed, "{got}");
    // A body slower than the body timeout: 408.
    let head = "POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n";
    let (got, _) = raw(
        &addr,
        &[head.as_bytes(), b"{\"text\":", b"\"hi\"}"],
        Duration::from_millis(1500),
        long,
    );
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    // A body shorter than announced, then the client stops sending: 400, not 413.
    let (got, _) = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).expect("connect");
        s.write_all(head.as_bytes()).expect("write");
        s.write_all(b"{\"text\":").expect("write");
        s.shutdown(std::net::Shutdown::Write).expect("half-close");
        s.set_read_timeout(Some(long)).expect("timeout");
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        (String::from_utf8_lossy(&got).into_owned(), ())
    };
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
}

#[test]
fn connections_over_the_limit_wait_and_health_answers_when_one_frees() {
    let limits = gpu_advisor::config::ServerLimits {
        header_timeout: Duration::from_secs(2),
        max_connections: 2,
        ..Default::default()
    };
    let (_rt, addr) = start_limited(limits);
    // Two idle connections take both places.
    let a = std::net::TcpStream::connect(&addr).expect("connect");
    let b = std::net::TcpStream::connect(&addr).expect("connect");
    std::thread::sleep(Duration::from_millis(200));
    // A third is accepted by the kernel but not served until a place frees: the header
    // timeout closes the idle two within 2 s.
    let t0 = std::time::Instant::now();
    let (got, _) = raw(
        &addr,
        &[b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"],
        Duration::ZERO,
        Duration::from_secs(10),
    );
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(
        t0.elapsed() >= Duration::from_millis(1000),
        "served only after a place freed: {:?}",
        t0.elapsed()
    );
    drop((a, b));
}

#[test]
fn spellings_of_one_token_share_one_rate_limit() {
    let s = start(Settings {
        api_tokens: vec![Secret::new("tok")],
        ask_rate_per_min: Some(3),
        ..Settings::default()
    });
    let body = r#"{"text":"T4 多少钱"}"#;
    let spellings = [
        "Bearer tok",
        "Bearer  tok",
        "Bearer tok ",
        "Bearer\ttok",
        "bearer tok",
        "Bearer tok  ",
    ];
    let statuses: Vec<u16> = spellings
        .iter()
        .map(|h| s.ask(body, &[JSON, ("authorization", h)]).status().as_u16())
        .collect();
    // Three answered, then the one bucket is empty whatever the spelling.
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!(ok <= 3, "{statuses:?}");
    assert!(
        statuses.iter().all(|s| [200, 401, 429].contains(s)),
        "{statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
}

/// A GET to the callback with `echostr` (URL-encoded here), signed by `c`.
fn verify_wecom_url(s: &Server, c: &WecomCrypto, echostr: &str) -> reqwest::blocking::Response {
    let (ts, nonce) = ("1700000000", "77");
    let sig = c.signature(ts, nonce, echostr);
    let encoded = echostr
        .replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D");
    let url = format!(
        "{}/wecom/callback?msg_signature={sig}&timestamp={ts}&nonce={nonce}&echostr={encoded}",
        s.base
    );
    s.client.get(url).send().expect("GET")
}

#[test]
fn wecom_url_verification_does_not_decrypt_a_captured_message() {
    let s = start(wecom_settings(None));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    // A captured message ciphertext replayed as an echostr, correctly signed.
    let captured = c.encrypt_with_random(&text_message("lisi", "我的预算是 5 万", "901"), [5; 16]);
    let r = verify_wecom_url(&s, &c, &captured);
    assert_eq!(r.status(), 400);
    let body = r.text().expect("body");
    assert_eq!(body, UNDECRYPTABLE);
    assert!(!body.contains("预算"), "{body}");
    // Tencent's published message too; a real echostr still verifies.
    assert_eq!(verify_wecom_url(&s, &c, MSG_ENCRYPT).status(), 400);
    let echo = c.encrypt_with_random("1288432023552776189", [6; 16]);
    let r = verify_wecom_url(&s, &c, &echo);
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().expect("body"), "1288432023552776189");
}

#[test]
fn wecom_decrypt_failures_are_indistinguishable() {
    let s = start(wecom_settings(None));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    // The frame of a message "hi": random(16) || be32(2) || "hi" || corp id, 40 bytes.
    let mut framed = vec![0u8; 16];
    framed.extend_from_slice(&2u32.to_be_bytes());
    framed.extend_from_slice(b"hi");
    framed.extend_from_slice(CORP_ID.as_bytes());
    assert_eq!(framed.len(), 40);
    let fill = 64 - framed.len();
    // Bad padding: the last byte says 24 but the byte before it is not 24.
    let mut bad_padding = framed.clone();
    bad_padding.resize(64, fill as u8);
    bad_padding[62] ^= 1;
    // Good padding, but a length field past the end of the plaintext.
    let mut bad_length = framed.clone();
    bad_length[16..20].copy_from_slice(&1000u32.to_be_bytes());
    bad_length.resize(64, fill as u8);
    // Good padding and length, a receive id that is not ours.
    let mut other_corp = framed.clone();
    other_corp[39] ^= 1;
    other_corp.resize(64, fill as u8);
    // Everything right but the message, which is not XML.
    let not_xml = c.encrypt_with_random("not xml at all", [9; 16]);
    let ciphertexts: Vec<String> = [bad_padding, bad_length, other_corp]
        .iter()
        .map(|p| c.encrypt_unframed(p).expect("aligned"))
        .chain([not_xml, "AAAA".into(), "!!!".into()])
        .collect();
    let answers: Vec<(u16, Vec<u8>)> = ciphertexts
        .iter()
        .map(|enc| {
            let sig = c.signature("1700000000", "5", enc);
            let r = post_wecom(&s, &sig, "1700000000", "5", envelope(enc));
            (r.status().as_u16(), r.bytes().expect("body").to_vec())
        })
        .collect();
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(
            a,
            &(400, UNDECRYPTABLE.as_bytes().to_vec()),
            "ciphertext {i}: {}",
            String::from_utf8_lossy(&a.1)
        );
    }
    // Whatever the fault, the GET answers alike too.
    for enc in &ciphertexts {
        let r = verify_wecom_url(&s, &c, enc);
        assert_eq!(r.status(), 400);
        assert_eq!(r.text().expect("body"), UNDECRYPTABLE);
    }
}

/// A text message as WeCom sends some of them: no MsgId.
fn text_message_without_id(from: &str, content: &str) -> String {
    format!(
        "<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName><FromUserName><![CDATA[{from}]]></FromUserName><CreateTime>1700000500</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{content}]]></Content><AgentID>1000002</AgentID></xml>"
    )
}

#[test]
fn wecom_messages_without_msg_id_in_one_second_get_their_own_replies() {
    let s = start(wecom_settings(None));
    let c = WecomCrypto::new(TOKEN, AES_KEY, CORP_ID).expect("crypto");
    let ask = |content: &str, random: u8| {
        let enc = c.encrypt_with_random(&text_message_without_id("wangwu", content), [random; 16]);
        let sig = c.signature("1700000500", "9", &enc);
        let body = post_wecom(&s, &sig, "1700000500", "9", envelope(&enc))
            .text()
            .expect("body");
        open_reply(&c, &body)
    };
    let h100 = ask("H100 80G 多少钱", 1);
    let t4 = ask("T4 多少钱", 2);
    assert!(h100.contains("H100"), "{h100}");
    assert!(t4.contains("T4"), "{t4}");
    assert!(
        !t4.contains("H100"),
        "the second message got the first one's reply: {t4}"
    );
    // A retry of the first (same content, same second) still gets the cached reply.
    assert_eq!(ask("H100 80G 多少钱", 3), h100);
    let m = s.get("/metrics").text().expect("body");
    assert!(
        m.contains("gpu_advisor_duplicates_total{channel=\"wecom\"} 1"),
        "{m}"
    );
}

/// `/v1/ask` through the router in process, from `peer`, with `headers`: the status.
fn ask_from(settings: Settings, peer: std::net::SocketAddr, headers: &[(&str, &str)]) -> u16 {
    use tower::ServiceExt;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let router = Services::build(data::embedded(), settings)
            .expect("services")
            .router(Vec::new());
        let mut req =
            axum::http::Request::post("/v1/ask").header("content-type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut req = req
            .body(axum::body::Body::from(r#"{"text":"T4 多少钱"}"#))
            .expect("request");
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        router
            .oneshot(req)
            .await
            .expect("infallible")
            .status()
            .as_u16()
    })
}

#[test]
fn open_mode_on_a_dual_stack_listener_takes_127_0_0_1() {
    // Bound to [::], a connection from 127.0.0.1 arrives as ::ffff:127.0.0.1.
    let mapped: std::net::SocketAddr = "[::ffff:127.0.0.1]:40000".parse().expect("addr");
    assert_eq!(ask_from(Settings::default(), mapped, &[]), 200);
    let v6_loopback: std::net::SocketAddr = "[::1]:40000".parse().expect("addr");
    assert_eq!(ask_from(Settings::default(), v6_loopback, &[]), 200);
    for outside in [
        "[::ffff:10.0.0.7]:40000",
        "10.0.0.7:40000",
        "[2001:db8::1]:40000",
    ] {
        let peer = outside.parse().expect("addr");
        assert_eq!(ask_from(Settings::default(), peer, &[]), 401, "{outside}");
    }
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let settings = || Settings {
        api_tokens: vec![Secret::new("t0k")],
        ..Settings::default()
    };
    let peer: std::net::SocketAddr = "10.0.0.7:40000".parse().expect("addr");
    for h in [
        "Bearer t0k",
        "bearer t0k",
        "BEARER t0k",
        "Bearer   t0k",
        " bEaReR t0k ",
    ] {
        assert_eq!(
            ask_from(settings(), peer, &[("authorization", h)]),
            200,
            "{h:?}"
        );
    }
    for h in ["Bearer t0K", "Basic t0k", "Bearert0k"] {
        assert_eq!(
            ask_from(settings(), peer, &[("authorization", h)]),
            401,
            "{h:?}"
        );
    }
}
