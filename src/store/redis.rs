//! The Redis backend of the store port (`REDIS_URL`), for several replicas sharing
//! conversations, dedupe keys and rate limits. It connects lazily and reconnects, and
//! every call is bounded by a timeout, so a Redis outage degrades answers (no context)
//! instead of stalling them.

use crate::advisor::State;
use crate::store::{Store, StoreError, StoreFuture};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Each Redis call gives up after this long.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(500);
/// While Redis is unreachable, one call per this interval tries to reconnect; the others
/// fail at once instead of each waiting for a connect timeout.
pub const RECONNECT_EVERY: Duration = Duration::from_secs(1);
const PREFIX: &str = "gpu-advisor:";

pub struct RedisStore {
    client: redis::Client,
    conn: Mutex<Conn>,
}

#[derive(Default)]
struct Conn {
    manager: Option<ConnectionManager>,
    /// After a failed connect, no new attempt before this instant.
    retry_at: Option<Instant>,
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

/// An error after which the connection is not trusted any more (as opposed to an error
/// reply from the server over a healthy connection).
fn broken(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout()
}

impl RedisStore {
    /// Checks the URL; the connection is made on first use.
    pub fn new(url: &str) -> Result<RedisStore, StoreError> {
        Ok(RedisStore {
            client: redis::Client::open(url).map_err(err)?,
            conn: Mutex::new(Conn::default()),
        })
    }

    /// The current connection, or one new connect attempt. The connection manager's own
    /// reconnect backoff (redis 0.27: 1 s, then up to 60 s) is disabled: reconnecting is
    /// done here, at most once per [`RECONNECT_EVERY`], so the store is back within about
    /// a second of Redis returning.
    async fn conn(&self) -> Result<ConnectionManager, StoreError> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.manager.as_ref() {
            return Ok(c.clone());
        }
        let now = Instant::now();
        if guard.retry_at.is_some_and(|t| now < t) {
            return Err(StoreError("unavailable, reconnecting".into()));
        }
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(0)
            .set_connection_timeout(CALL_TIMEOUT)
            .set_response_timeout(CALL_TIMEOUT);
        let made = tokio::time::timeout(
            CALL_TIMEOUT,
            ConnectionManager::new_with_config(self.client.clone(), config),
        )
        .await;
        match made {
            Ok(Ok(c)) => {
                *guard = Conn {
                    manager: Some(c.clone()),
                    retry_at: None,
                };
                Ok(c)
            }
            failed => {
                guard.retry_at = Some(now + RECONNECT_EVERY);
                Err(match failed {
                    Ok(Err(e)) => err(e),
                    _ => StoreError("connect timed out".into()),
                })
            }
        }
    }

    /// Forgets a connection that failed, so the next call reconnects.
    async fn drop_conn(&self) {
        self.conn.lock().await.manager = None;
    }

    async fn run<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        match tokio::time::timeout(CALL_TIMEOUT, cmd.query_async::<T>(&mut c)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if broken(&e) {
                    self.drop_conn().await;
                }
                Err(err(e))
            }
            Err(_) => {
                self.drop_conn().await;
                Err(StoreError("call timed out".into()))
            }
        }
    }
}

/// One atomic step (a script runs alone on the server): count the hit, and give the
/// counter its window whenever it has none, so no failure between two calls can leave
/// a counter that never expires and silences a user for good (a counter left without an
/// expiry by anything else is healed on its next hit).
const HIT_SCRIPT: &str = "local n = redis.call('INCR', KEYS[1]) \
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end \
return n";

fn key(kind: &str, k: &str) -> String {
    format!("{PREFIX}{kind}:{k}")
}

fn millis(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

impl Store for RedisStore {
    fn load(&self, k: &str) -> StoreFuture<'_, Option<State>> {
        let cmd = redis::cmd("GET").arg(key("state", k)).clone();
        Box::pin(async move {
            let v: Option<String> = self.run(cmd).await?;
            Ok(v.and_then(|s| serde_json::from_str(&s).ok()))
        })
    }
    fn save_encoded(&self, k: &str, json: &[u8], ttl: Duration) -> StoreFuture<'_, ()> {
        let cmd = redis::cmd("SET")
            .arg(key("state", k))
            .arg(json)
            .arg("PX")
            .arg(millis(ttl))
            .clone();
        Box::pin(async move { self.run::<()>(cmd).await })
    }
    fn first_seen(&self, k: &str, ttl: Duration) -> StoreFuture<'_, bool> {
        let cmd = redis::cmd("SET")
            .arg(key("seen", k))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(millis(ttl))
            .clone();
        Box::pin(async move {
            let v: Option<String> = self.run(cmd).await?;
            Ok(v.is_some())
        })
    }
    fn hit(&self, k: &str, window: Duration) -> StoreFuture<'_, u64> {
        let cmd = redis::cmd("EVAL")
            .arg(HIT_SCRIPT)
            .arg(1)
            .arg(key("hits", k))
            .arg(millis(window))
            .clone();
        Box::pin(async move { self.run(cmd).await })
    }
    fn setting(&self, k: &str) -> StoreFuture<'_, Option<String>> {
        let cmd = redis::cmd("GET").arg(key("setting", k)).clone();
        Box::pin(async move { self.run(cmd).await })
    }
    fn set_setting(&self, k: &str, value: &str) -> StoreFuture<'_, ()> {
        let cmd = redis::cmd("SET").arg(key("setting", k)).arg(value).clone();
        Box::pin(async move { self.run::<()>(cmd).await })
    }
    fn reply(&self, k: &str) -> StoreFuture<'_, Option<String>> {
        let cmd = redis::cmd("GET").arg(key("reply", k)).clone();
        Box::pin(async move { self.run(cmd).await })
    }
    fn set_reply(&self, k: &str, reply: &str, ttl: Duration) -> StoreFuture<'_, ()> {
        let cmd = redis::cmd("SET")
            .arg(key("reply", k))
            .arg(reply)
            .arg("PX")
            .arg(millis(ttl))
            .clone();
        Box::pin(async move { self.run::<()>(cmd).await })
    }
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move { self.run::<()>(redis::cmd("PING")).await })
    }
    fn name(&self) -> &'static str {
        "redis"
    }
}
