//! The Redis backend of the store port (`REDIS_URL`), for several replicas sharing
//! conversations, dedupe keys and rate limits. It connects lazily and reconnects, and
//! every call is bounded by a timeout, so a Redis outage degrades answers (no context)
//! instead of stalling them.

use crate::advisor::State;
use crate::store::{Store, StoreError, StoreFuture};
use redis::aio::ConnectionManager;
use std::time::Duration;
use tokio::sync::Mutex;

/// Each Redis call gives up after this long.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(500);
const PREFIX: &str = "gpu-advisor:";

pub struct RedisStore {
    client: redis::Client,
    conn: Mutex<Option<ConnectionManager>>,
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

impl RedisStore {
    /// Checks the URL; the connection is made on first use.
    pub fn new(url: &str) -> Result<RedisStore, StoreError> {
        Ok(RedisStore {
            client: redis::Client::open(url).map_err(err)?,
            conn: Mutex::new(None),
        })
    }

    async fn conn(&self) -> Result<ConnectionManager, StoreError> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let c = tokio::time::timeout(CALL_TIMEOUT, ConnectionManager::new(self.client.clone()))
            .await
            .map_err(|_| StoreError("connect timed out".into()))?
            .map_err(err)?;
        *guard = Some(c.clone());
        Ok(c)
    }

    async fn run<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> Result<T, StoreError> {
        let mut c = self.conn().await?;
        match tokio::time::timeout(CALL_TIMEOUT, cmd.query_async::<T>(&mut c)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(err(e)),
            Err(_) => Err(StoreError("call timed out".into())),
        }
    }
}

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
    fn save(&self, k: &str, state: &State, ttl: Duration) -> StoreFuture<'_, ()> {
        let json = serde_json::to_string(state).unwrap_or_default();
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
        let name = key("hits", k);
        Box::pin(async move {
            let n: u64 = self.run(redis::cmd("INCR").arg(&name).clone()).await?;
            if n == 1 {
                self.run::<()>(redis::cmd("PEXPIRE").arg(&name).arg(millis(window)).clone())
                    .await?;
            }
            Ok(n)
        })
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
    fn name(&self) -> &'static str {
        "redis"
    }
}
