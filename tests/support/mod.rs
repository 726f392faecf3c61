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

/// A fresh empty directory under the system's temp dir, for one test.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gpu-advisor-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `gpu-advisor report FILE`: what the sales team reads of the misses log.
pub fn report(file: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
        .arg("report")
        .arg(file)
        .output()
        .expect("gpu-advisor report runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}
