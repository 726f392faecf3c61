//! Hot reload and shutdown of the real `serve` process: a price edit in catalog/ shows up
//! without a restart (on file change and on SIGHUP), a broken edit keeps the old data and
//! is logged with file and key and counted, and SIGTERM exits promptly.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::free_port;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
        }
    }
}

/// Write then rename, as editors and ConfigMap updates do, so a poll never reads half a file.
fn write_atomic(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

struct Served {
    child: Child,
    base: String,
    dir: PathBuf,
    log: PathBuf,
    client: reqwest::blocking::Client,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Served {
    fn start(name: &str, poll_secs: u64) -> Served {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir =
            std::env::temp_dir().join(format!("gpu-advisor-reload-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&root.join("catalog"), &dir.join("catalog"));
        copy_dir(&root.join("intents"), &dir.join("intents"));
        let log = dir.join("serve.log");
        // A free port can be taken by another test's server between the probe and the
        // bind: this server is ready once its own log says it listens; if it exited
        // instead, it starts again on another port (never talking to a stranger).
        let (port, child) = loop {
            let port = free_port();
            let mut child = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
                .arg("--catalog")
                .arg(dir.join("catalog"))
                .arg("--intents")
                .arg(dir.join("intents"))
                .arg("serve")
                .env_clear()
                .env("GPU_ADVISOR_LISTEN", format!("127.0.0.1:{port}"))
                .env("GPU_ADVISOR_RELOAD_POLL_SECS", poll_secs.to_string())
                .stdout(std::fs::File::create(&log).expect("log file"))
                .stderr(Stdio::inherit())
                .spawn()
                .expect("serve starts");
            let t0 = Instant::now();
            let listening = loop {
                if std::fs::read_to_string(&log).is_ok_and(|l| l.contains("listening")) {
                    break true;
                }
                if child.try_wait().expect("wait").is_some() {
                    break false;
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(15),
                    "serve did not start"
                );
                std::thread::sleep(Duration::from_millis(50));
            };
            if listening {
                break (port, child);
            }
        };
        let s = Served {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
            log,
            client: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client"),
        };
        s.wait_for("healthz", || {
            s.client
                .get(format!("{}/healthz", s.base))
                .send()
                .is_ok_and(|r| r.status().is_success())
        });
        s
    }

    fn wait_for(&self, what: &str, mut ok: impl FnMut() -> bool) {
        let t0 = Instant::now();
        while !ok() {
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "timed out waiting for {what}; log:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The monthly list price the bot quotes for a T4 now.
    fn t4_price(&self) -> f64 {
        let v: serde_json::Value = self
            .client
            .post(format!("{}/v1/ask", self.base))
            .header("content-type", "application/json")
            .body(r#"{"text":"T4 多少钱一个月"}"#)
            .send()
            .expect("ask")
            .json()
            .expect("json");
        assert_eq!(v["recommendation"]["offer"], "t4", "{v}");
        v["recommendation"]["monthly_cny"]["min"]
            .as_f64()
            .expect("price")
    }

    fn metric(&self, name: &str) -> f64 {
        let text = self
            .client
            .get(format!("{}/metrics", self.base))
            .send()
            .expect("metrics")
            .text()
            .expect("text");
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from /metrics"))
    }

    fn set_t4_price(&self, min: u32, max: u32) {
        let p = self.dir.join("catalog/offers.toml");
        let text = std::fs::read_to_string(&p).expect("offers");
        let start = text.find("id = \"t4\"").expect("t4 offer");
        let at = start + text[start..].find("price = {").expect("price line");
        let end = at + text[at..].find('\n').expect("eol");
        let edited = format!(
            "{}price = {{ min = {min}, max = {max} }}{}",
            &text[..at],
            &text[end..]
        );
        write_atomic(&p, &edited);
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{sig}");
    }
}

#[test]
fn edited_price_is_picked_up_and_a_broken_edit_keeps_the_old_data() {
    let s = Served::start("watch", 1);
    assert_eq!(s.t4_price(), 900.0);
    assert_eq!(s.metric("gpu_advisor_reloads_total"), 0.0);

    s.set_t4_price(950, 950);
    s.wait_for("the new price", || s.t4_price() == 950.0);
    assert_eq!(s.metric("gpu_advisor_reloads_total"), 1.0);
    assert_eq!(s.metric("gpu_advisor_reload_failures_total"), 0.0);

    // min above max: the catalog check rejects it; the 950 stays in force.
    s.set_t4_price(990, 900);
    s.wait_for("the rejected reload", || {
        s.metric("gpu_advisor_reload_failures_total") == 1.0
    });
    assert_eq!(s.t4_price(), 950.0);
    let log = s.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("reload rejected: data problem"))
        .unwrap_or_else(|| panic!("problem not logged:\n{log}"));
    assert!(
        line.contains("offers.toml") && line.contains("t4"),
        "{line}"
    );
    assert!(line.contains("price"), "{line}");

    // A TOML syntax error is rejected the same way.
    write_atomic(&s.dir.join("intents/extra.toml"), "[[cue\nbroken");
    s.wait_for("the second rejected reload", || {
        s.metric("gpu_advisor_reload_failures_total") == 2.0
    });
    assert_eq!(s.t4_price(), 950.0);
    assert!(s.log_text().contains("extra.toml"), "{}", s.log_text());

    // Fixing both files applies the fixed data.
    std::fs::remove_file(s.dir.join("intents/extra.toml")).expect("rm");
    s.set_t4_price(980, 980);
    s.wait_for("the fixed price", || s.t4_price() == 980.0);
    assert_eq!(s.metric("gpu_advisor_reloads_total"), 2.0);
}

#[test]
fn sighup_reloads_and_sigterm_stops_within_ten_seconds() {
    let mut s = Served::start("hup", 0);
    s.set_t4_price(1000, 1000);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(s.t4_price(), 900.0, "file watching is off: no reload yet");
    s.signal("HUP");
    s.wait_for("the SIGHUP reload", || s.t4_price() == 1000.0);
    assert!(s.log_text().contains("SIGHUP"), "{}", s.log_text());

    let t0 = Instant::now();
    s.signal("TERM");
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "serve still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}\n{}", s.log_text());
}
