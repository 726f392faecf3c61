//! What several test modules (and the fuzz targets) share: free ports on 127.0.0.1 and
//! Tencent's published WeCom sample vectors.

#![allow(dead_code)]

/// A TCP port on 127.0.0.1 that was free a moment ago (for child processes that bind
/// their own listener).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A listener on a free port of 127.0.0.1 for an in-process server, and its base URL.
pub async fn listener() -> (tokio::net::TcpListener, String) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", l.local_addr().expect("addr"));
    (l, url)
}

#[allow(dead_code)]
pub mod wecom_vectors;
