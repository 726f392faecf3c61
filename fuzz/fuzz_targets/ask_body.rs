//! `POST /v1/ask` through the real router: any body, raw and as the `text` of a
//! well-formed request. Every response is JSON with a 200, 400 or 413 status, never a 5xx.
#![no_main]

use axum::http::StatusCode;
use gpu_advisor::config::Settings;
use gpu_advisor::server::InProcess;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn post(body: Vec<u8>) -> (StatusCode, serde_json::Value) {
    static ROUTER: OnceLock<InProcess> = OnceLock::new();
    let router = ROUTER.get_or_init(|| InProcess::new(Settings::default()).expect("app"));
    let (status, bytes) = router.post_json("/v1/ask", body);
    let json =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{status}: not JSON ({e})"));
    (status, json)
}

fuzz_target!(|data: &[u8]| {
    let (status, json) = post(data.to_vec());
    match status.as_u16() {
        200 => assert!(json["reply"].is_string(), "200 without a reply"),
        400 | 413 => assert!(
            json["error"]["code"].is_string(),
            "{status} without an error code"
        ),
        other => panic!("unexpected status {other}: {json}"),
    }

    let text = String::from_utf8_lossy(data);
    let conversation = format!("c{}", data.len() % 7);
    let body = serde_json::json!({ "text": text, "conversation": conversation });
    let (status, json) = post(body.to_string().into_bytes());
    assert_eq!(status, StatusCode::OK, "{json}");
    assert!(
        json["reply"].as_str().is_some_and(|r| !r.is_empty()),
        "{json}"
    );
});
