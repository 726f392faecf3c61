//! One contract suite for the store port, run on the in-memory backend and on Redis (a
//! real `redis-server` started here on a free port). In CI (`CI` set) a missing
//! `redis-server` fails the run instead of skipping it. Then the app layer on a shared
//! Redis: a follow-up handled by replica B sees replica A's turn.

use gpu_advisor::advisor::State;
use gpu_advisor::app::{Channel, Chat, Inbound, Limits, Live, Metrics, Misses, Outcome, Silence};
use gpu_advisor::data;
use gpu_advisor::store::{Clock, ManualClock, MemoryStore, Observed, RedisStore, Store};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

struct RedisServer {
    child: Child,
    url: String,
    _dir: std::path::PathBuf,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

use crate::support::free_port;

/// Starts `redis-server` on a free port, or None when it is not installed (outside CI).
fn redis_server() -> Option<RedisServer> {
    redis_server_on(free_port())
}

/// Starts `redis-server` on `port` (see `redis_server`).
fn redis_server_on(port: u16) -> Option<RedisServer> {
    let dir = std::env::temp_dir().join(format!("gpu-advisor-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "redis-server is required in CI: {e}"
            );
            eprintln!("redis-server not installed: skipping the Redis run ({e})");
            return None;
        }
    };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(RedisServer {
                child,
                url: format!("redis://127.0.0.1:{port}/"),
                _dir: dir,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server did not start on port {port}");
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// How the contract lets time pass: the memory backend reads a clock the test moves;
/// Redis expires keys by its own clock, so its run waits.
enum Time {
    Manual(Arc<ManualClock>),
    Real,
}

impl Time {
    async fn pass(&self, d: Duration) {
        match self {
            Time::Manual(c) => c.advance(d),
            Time::Real => tokio::time::sleep(d).await,
        }
    }
}

/// The contract every backend meets.
async fn contract(store: &dyn Store, tag: &str, time: Time) {
    let k = |s: &str| format!("{tag}:{s}");
    assert_eq!(store.load(&k("none")).await.expect("load"), None);
    let state = State {
        turns: 3,
        last: None,
        lang: Some(gpu_advisor::advisor::parse::Lang::En),
        last_lang: Some(gpu_advisor::advisor::parse::Lang::Zh),
    };
    store
        .save(&k("s"), &state, Duration::from_secs(60))
        .await
        .expect("save");
    assert_eq!(store.load(&k("s")).await.expect("load"), Some(state));
    store
        .save(&k("short"), &State::default(), Duration::from_millis(50))
        .await
        .expect("save");
    time.pass(Duration::from_millis(120)).await;
    assert_eq!(
        store.load(&k("short")).await.expect("load"),
        None,
        "state expires"
    );

    assert!(store
        .first_seen(&k("m1"), Duration::from_secs(60))
        .await
        .expect("seen"));
    assert!(!store
        .first_seen(&k("m1"), Duration::from_secs(60))
        .await
        .expect("seen"));
    assert!(store
        .first_seen(&k("m2"), Duration::from_secs(60))
        .await
        .expect("seen"));

    for n in 1..=3 {
        assert_eq!(
            store
                .hit(&k("h"), Duration::from_secs(60))
                .await
                .expect("hit"),
            n
        );
    }
    assert_eq!(
        store
            .hit(&k("w"), Duration::from_millis(50))
            .await
            .expect("hit"),
        1
    );
    time.pass(Duration::from_millis(120)).await;
    assert_eq!(
        store
            .hit(&k("w"), Duration::from_millis(50))
            .await
            .expect("hit"),
        1,
        "windows reset"
    );

    assert_eq!(store.setting(&k("auto")).await.expect("setting"), None);
    store.set_setting(&k("auto"), "on").await.expect("set");
    assert_eq!(
        store.setting(&k("auto")).await.expect("setting").as_deref(),
        Some("on")
    );
    // Replies remembered for retries, until their TTL.
    assert_eq!(store.reply(&k("r")).await.expect("reply"), None);
    store
        .set_reply(&k("r"), "<xml>…</xml>", Duration::from_millis(300))
        .await
        .expect("set_reply");
    assert_eq!(
        store.reply(&k("r")).await.expect("reply").as_deref(),
        Some("<xml>…</xml>")
    );
    time.pass(Duration::from_millis(400)).await;
    assert_eq!(store.reply(&k("r")).await.expect("reply"), None);
}

#[test]
fn memory_store_meets_the_contract() {
    let clock = ManualClock::new();
    let store = MemoryStore::with_clock(1000, Clock::Manual(Arc::clone(&clock)));
    rt().block_on(contract(&store, "mem", Time::Manual(clock)));
}

#[test]
fn memory_store_is_bounded() {
    let s = MemoryStore::new(100);
    rt().block_on(async {
        for i in 0..1000 {
            s.save(&format!("k{i}"), &State::default(), Duration::from_secs(60))
                .await
                .expect("save");
        }
        assert!(s.load("k999").await.expect("load").is_some());
        assert!(
            s.load("k0").await.expect("load").is_none(),
            "oldest evicted"
        );
    });
}

/// `redis-cli` against `server`: the reply, trimmed.
fn redis_cli(server: &RedisServer, args: &[&str]) -> String {
    let port = server
        .url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .expect("port");
    let out = Command::new("redis-cli")
        .args(["-p", port])
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_redis_rate_counter_always_gets_its_window() {
    let Some(server) = redis_server() else { return };
    let store = RedisStore::new(&server.url).expect("url");
    let window = Duration::from_secs(60);
    let rt = rt();
    rt.block_on(async {
        assert_eq!(store.hit("fresh", window).await.expect("hit"), 1);
    });
    let ttl: i64 = redis_cli(&server, &["PTTL", "gpu-advisor:hits:fresh"])
        .parse()
        .expect("ms");
    assert!((1..=60_000).contains(&ttl), "a new counter expires: {ttl}");
    // A counter left without an expiry (a failed call between INCR and PEXPIRE, as two
    // separate calls could leave it) gets its window back on the next hit.
    assert_eq!(
        redis_cli(&server, &["SET", "gpu-advisor:hits:stuck", "41"]),
        "OK"
    );
    rt.block_on(async {
        assert_eq!(store.hit("stuck", window).await.expect("hit"), 42);
    });
    let ttl: i64 = redis_cli(&server, &["PTTL", "gpu-advisor:hits:stuck"])
        .parse()
        .expect("ms");
    assert!(
        (1..=60_000).contains(&ttl),
        "the stuck counter expires again: {ttl}"
    );
}

#[test]
fn redis_store_meets_the_contract() {
    let Some(server) = redis_server() else { return };
    let store = RedisStore::new(&server.url).expect("url");
    rt().block_on(contract(&store, "redis", Time::Real));
}

#[test]
fn redis_down_degrades_instead_of_hanging() {
    let store = RedisStore::new(&format!("redis://127.0.0.1:{}/", free_port())).expect("url");
    rt().block_on(async {
        let t0 = std::time::Instant::now();
        assert!(store.load("x").await.is_err());
        assert!(t0.elapsed() < Duration::from_secs(3));
    });
}

fn chat(store: Arc<dyn Store>) -> Chat {
    Chat::new(
        Arc::new(Live::new(data::embedded())),
        store,
        Arc::new(Metrics::new()),
        Arc::new(Misses::new(None)),
        Limits::default(),
    )
    .named("gpu_bot")
}

fn msg(id: &str, text: &str) -> Inbound {
    Inbound {
        channel: Channel::Telegram,
        chat: "-100".into(),
        user: "42".into(),
        message_id: id.into(),
        text: text.into(),
        group: true,
        mentions_bot: true,
        ..Inbound::default()
    }
}

#[test]
fn two_replicas_share_one_conversation_through_redis() {
    let Some(server) = redis_server() else { return };
    let a = chat(Arc::new(RedisStore::new(&server.url).expect("url")));
    let b = chat(Arc::new(RedisStore::new(&server.url).expect("url")));
    rt().block_on(async {
        let Outcome::Answer(first) = a.handle(&msg("1", "@gpu_bot 3090 能跑 13B 吗")).await
        else {
            panic!("answered")
        };
        assert_eq!(first.answer.verdict.as_ref().map(|v| v.fits), Some(false));
        let Outcome::Answer(second) = b.handle(&msg("2", "@gpu_bot INT4 呢")).await else {
            panic!("answered")
        };
        let v = second
            .answer
            .verdict
            .as_ref()
            .expect("replica B continued the feasibility question");
        assert!(v.fits);
        // The same delivery reaching the other replica is answered once.
        assert!(matches!(
            a.handle(&msg("2", "@gpu_bot INT4 呢")).await,
            Outcome::Silent(Silence::Duplicate)
        ));
    });
}

#[test]
fn addressing_duplicates_and_rate_limits() {
    let c = chat(Arc::new(MemoryStore::new(1000)));
    rt().block_on(async {
        let mut quiet = msg("q1", "4090 能跑 70B 吗");
        quiet.mentions_bot = false;
        assert!(matches!(
            c.handle(&quiet).await,
            Outcome::Silent(Silence::NotAddressed)
        ));
        let mut private = quiet.clone();
        private.group = false;
        private.message_id = "p1".into();
        assert!(matches!(c.handle(&private).await, Outcome::Answer(_)));
        let mut cmd = quiet.clone();
        cmd.message_id = "c1".into();
        cmd.text = "/price@gpu_bot a100".into();
        let Outcome::Answer(a) = c.handle(&cmd).await else {
            panic!("command answered")
        };
        assert!(a.answer.reply().contains("2,800"));
        let mut other_bot = cmd.clone();
        other_bot.message_id = "c2".into();
        other_bot.text = "/price@other_bot a100".into();
        assert!(matches!(
            c.handle(&other_bot).await,
            Outcome::Silent(Silence::NotAddressed)
        ));

        // `/auto on` from a member who is not an admin changes nothing.
        let mut toggle = quiet.clone();
        toggle.message_id = "t1".into();
        toggle.text = "/auto@gpu_bot on".into();
        let Outcome::Notice(n) = c.handle(&toggle).await else {
            panic!("a notice")
        };
        assert!(n.contains("admin"), "{n}");
        let mut auto = quiet.clone();
        auto.message_id = "a0".into();
        assert!(matches!(
            c.handle(&auto).await,
            Outcome::Silent(Silence::NotAddressed)
        ));
        // From an admin it turns auto mode on.
        toggle.message_id = "t2".into();
        toggle.admin = true;
        let Outcome::Notice(n) = c.handle(&toggle).await else {
            panic!("a notice")
        };
        assert!(n.contains("Auto-answer is on"), "{n}");
        // Auto mode answers clear GPU questions without a mention, and nothing else.
        auto.message_id = "a1".into();
        assert!(matches!(c.handle(&auto).await, Outcome::Answer(_)));
        auto.message_id = "a2".into();
        auto.text = "明天放假吗".into();
        assert!(matches!(
            c.handle(&auto).await,
            Outcome::Silent(Silence::NotAddressed)
        ));
        // And `/auto off` turns it off again.
        toggle.message_id = "t3".into();
        toggle.text = "/auto off".into();
        assert!(matches!(c.handle(&toggle).await, Outcome::Notice(_)));
        auto.message_id = "a3".into();
        auto.text = "4090 能跑 70B 吗".into();
        assert!(matches!(
            c.handle(&auto).await,
            Outcome::Silent(Silence::NotAddressed)
        ));

        // One user: 10 a minute, then one notice, then silence.
        let limiter = chat(Arc::new(MemoryStore::new(1000)));
        let mut notices = 0;
        let mut answers = 0;
        for i in 0..15 {
            match limiter
                .handle(&msg(&format!("r{i}"), "@gpu_bot T4 多少钱"))
                .await
            {
                Outcome::Answer(_) => answers += 1,
                Outcome::Notice(n) => {
                    notices += 1;
                    assert!(n.contains("稍等"));
                }
                Outcome::Silent(s) => assert_eq!(s, Silence::RateLimited),
                Outcome::Limited { .. } => panic!("a chat user gets notices, not retry times"),
            }
        }
        assert_eq!((answers, notices), (10, 1));
    });
}

#[test]
fn redis_outage_at_start_and_mid_run_degrades_then_recovers() {
    let port = free_port();
    let metrics = Arc::new(Metrics::new());
    let redis = RedisStore::new(&format!("redis://127.0.0.1:{port}/")).expect("url");
    let c = chat(Arc::new(Observed::new(
        Arc::new(redis),
        Arc::clone(&metrics.store),
    )));
    let up = || metrics.store.up.load(Ordering::Relaxed);
    let errors = || metrics.store.errors.load(Ordering::Relaxed);
    let rt = rt();
    let ask = |user: &str, id: &str, text: &str| {
        let mut m = msg(id, text);
        m.user = user.into();
        match rt.block_on(c.handle(&m)) {
            Outcome::Answer(a) => a,
            other => panic!("{text}: answered without the store, got {other:?}"),
        }
    };
    // A follow-up that only makes sense with the first turn's context.
    let follow_up_works = |user: &str, id: &str| {
        ask(user, &format!("{id}a"), "@gpu_bot 3090 能跑 13B 吗");
        ask(user, &format!("{id}b"), "@gpu_bot INT4 呢")
            .answer
            .verdict
            .as_ref()
            .is_some_and(|v| v.fits)
    };

    // Down at start: answers still come, without context; the outage is counted.
    let a = ask("u1", "1", "@gpu_bot 3090 能跑 13B 吗");
    assert_eq!(a.answer.verdict.as_ref().map(|v| v.fits), Some(false));
    assert_eq!(up(), 0);
    assert!(errors() > 0);
    assert!(!follow_up_works("u1", "2"), "no context without the store");

    // Redis comes up: context works again without a restart.
    let Some(server) = redis_server_on(port) else {
        return;
    };
    let t0 = std::time::Instant::now();
    let mut n = 0;
    while !follow_up_works(&format!("u2-{n}"), &format!("3-{n}")) {
        assert!(t0.elapsed() < Duration::from_secs(5), "no recovery");
        std::thread::sleep(Duration::from_millis(200));
        n += 1;
    }
    assert_eq!(up(), 1);

    // Down mid-run: still answering, counted again.
    drop(server);
    let before = errors();
    let a = ask("u3", "4", "@gpu_bot 4090 能跑 70B 吗");
    assert!(a.answer.verdict.is_some());
    assert_eq!(up(), 0);
    assert!(errors() > before);
    std::thread::sleep(Duration::from_secs(3));
    assert!(!ask("u3", "5", "@gpu_bot T4 多少钱")
        .answer
        .reply()
        .is_empty());

    // And back again.
    let _server = redis_server_on(port).expect("restart");
    let t0 = std::time::Instant::now();
    let mut n = 0;
    while !follow_up_works(&format!("u4-{n}"), &format!("6-{n}")) {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "no recovery after the restart"
        );
        std::thread::sleep(Duration::from_millis(200));
        n += 1;
    }
    assert_eq!(up(), 1);
}

#[test]
fn store_up_follows_a_ping_without_any_request() {
    let port = free_port();
    let metrics = Arc::new(Metrics::new());
    let redis = RedisStore::new(&format!("redis://127.0.0.1:{port}/")).expect("url");
    let store = Arc::new(Observed::new(Arc::new(redis), Arc::clone(&metrics.store)));
    let up = || metrics.store.up.load(Ordering::Relaxed);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let watched = Arc::clone(&store);
    rt.spawn(async move {
        watched
            .watch_health(Duration::from_millis(50), async {
                let _ = rx.await;
            })
            .await
    });
    let wait_for = |want: u64| {
        let t0 = std::time::Instant::now();
        while up() != want {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "store_up never became {want}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // Unreachable at start: 0, not the 1 a first request would have had to correct.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(up(), 0);
    let Some(server) = redis_server_on(port) else {
        return;
    };
    wait_for(1);
    drop(server);
    wait_for(0);
    let _ = tx.send(());
}
