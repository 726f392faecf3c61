//! The store port: conversation state (TTL 30 min), duplicate-delivery keys and
//! rate-limit counters, shared by every adapter. Two backends: in memory (default,
//! bounded) and Redis (`REDIS_URL`, for several replicas); one contract suite
//! (`tests/store.rs`) runs against both. `observed` wraps either with health counters for
//! the metrics. Nothing here knows about platforms or the core beyond `State`.

use crate::advisor::State;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A store failure (the Redis backend; memory never fails). Callers degrade: they
/// answer without context rather than not at all.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// A conversation state as both backends keep it: compact JSON, where what was not said
/// is left out.
pub fn encode_state(state: &State) -> Vec<u8> {
    serde_json::to_vec(state).unwrap_or_default()
}

pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

pub trait Store: Send + Sync {
    /// The conversation state under `key`, if it has not expired.
    fn load(&self, key: &str) -> StoreFuture<'_, Option<State>>;
    /// Saves the state for `ttl`.
    fn save(&self, key: &str, state: &State, ttl: Duration) -> StoreFuture<'_, ()> {
        self.save_encoded(key, &encode_state(state), ttl)
    }
    /// Saves a state already encoded by [`encode_state`] (an answer served to many
    /// conversations encodes the state it leaves once).
    fn save_encoded(&self, key: &str, json: &[u8], ttl: Duration) -> StoreFuture<'_, ()>;
    /// Marks `key` as seen for `ttl`: true the first time, false while it is remembered.
    fn first_seen(&self, key: &str, ttl: Duration) -> StoreFuture<'_, bool>;
    /// Counts a hit on `key` in the current window of `window`; returns the count.
    fn hit(&self, key: &str, window: Duration) -> StoreFuture<'_, u64>;
    /// A small per-chat setting (e.g. auto-answer), if set.
    fn setting(&self, key: &str) -> StoreFuture<'_, Option<String>>;
    fn set_setting(&self, key: &str, value: &str) -> StoreFuture<'_, ()>;
    /// The reply already sent for a delivery (WeCom retries get the same one, on any
    /// replica), if it is still remembered.
    fn reply(&self, key: &str) -> StoreFuture<'_, Option<String>>;
    /// Remembers the reply sent for a delivery for `ttl`.
    fn set_reply(&self, key: &str, reply: &str, ttl: Duration) -> StoreFuture<'_, ()>;
    /// Whether the backend answers (Redis: `PING`; memory: always).
    fn ping(&self) -> StoreFuture<'_, ()>;
    /// The backend's name, for logs.
    fn name(&self) -> &'static str;
}

mod memory;
mod observed;
pub mod redis;
mod ttl;

pub use memory::MemoryStore;
pub use observed::{Health, Observed};
pub use redis::RedisStore;
pub use ttl::{Clock, ManualClock, TtlMap};
