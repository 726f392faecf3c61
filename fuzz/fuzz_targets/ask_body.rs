//! `POST /v1/ask` through the real router: any body, raw and as the `text` of a
//! well-formed request. Every response is JSON with a 200, 400 or 413 status, never a 5xx.
#![no_main]

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use gpu_advisor::config::Settings;
use libfuzzer_sys::fuzz_target;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

struct World {
    rt: tokio::runtime::Runtime,
    router: axum::Router,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let app = rt.block_on(async {
            gpu_advisor::http::App::new(gpu_advisor::data::embedded(), Settings::default())
                .expect("app")
        });
        World {
            rt,
            router: gpu_advisor::http::router(Arc::clone(&app)),
        }
    })
}

fn post(body: Vec<u8>) -> (StatusCode, serde_json::Value) {
    let w = world();
    let mut req = Request::post("/v1/ask")
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("request");
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
    w.rt.block_on(async {
        let res = w.router.clone().oneshot(req).await.expect("infallible");
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .expect("response body");
        let json =
            serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{status}: not JSON ({e})"));
        (status, json)
    })
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
