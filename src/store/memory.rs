//! The in-memory store backend (the default): bounded, per process, gone on restart.

use super::{Clock, State, Store, StoreFuture, TtlMap};
use std::time::Duration;

/// The in-memory backend: bounded maps, nothing survives a restart.
pub struct MemoryStore {
    /// Conversation states as compact JSON (what was not said is left out): a 16-byte
    /// pointer in the table and ~150 bytes behind it, instead of the whole struct in
    /// every slot of the table, which matters at a hundred thousand conversations.
    states: TtlMap<Box<[u8]>>,
    seen: TtlMap<()>,
    hits: TtlMap<u64>,
    settings: TtlMap<String>,
    replies: TtlMap<String>,
}

impl MemoryStore {
    /// At most `capacity` entries per kind.
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore::with_clock(capacity, Clock::System)
    }

    /// A store whose entries expire by `clock` (tests advance a manual one).
    pub fn with_clock(capacity: usize, clock: Clock) -> MemoryStore {
        MemoryStore {
            states: TtlMap::with_clock(capacity, clock.clone()),
            seen: TtlMap::with_clock(capacity, clock.clone()),
            hits: TtlMap::with_clock(capacity, clock.clone()),
            settings: TtlMap::with_clock(capacity, clock.clone()),
            replies: TtlMap::with_clock(capacity, clock),
        }
    }
}

/// Settings stay a year in memory (they are few).
const SETTING_TTL: Duration = Duration::from_secs(365 * 24 * 3600);

impl Store for MemoryStore {
    fn load(&self, key: &str) -> StoreFuture<'_, Option<State>> {
        let v = self
            .states
            .get(key)
            .and_then(|b| serde_json::from_slice(&b).ok());
        Box::pin(async move { Ok(v) })
    }
    fn save_encoded(&self, key: &str, json: &[u8], ttl: Duration) -> StoreFuture<'_, ()> {
        self.states.put(key, json.into(), ttl);
        Box::pin(async { Ok(()) })
    }
    fn first_seen(&self, key: &str, ttl: Duration) -> StoreFuture<'_, bool> {
        let first = self.seen.put_new(key, (), ttl);
        Box::pin(async move { Ok(first) })
    }
    fn hit(&self, key: &str, window: Duration) -> StoreFuture<'_, u64> {
        let n = self.hits.update(key, 0, window, |n| *n += 1);
        Box::pin(async move { Ok(n) })
    }
    fn setting(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        let v = self.settings.get(key);
        Box::pin(async move { Ok(v) })
    }
    fn set_setting(&self, key: &str, value: &str) -> StoreFuture<'_, ()> {
        self.settings.put(key, value.to_string(), SETTING_TTL);
        Box::pin(async { Ok(()) })
    }
    fn reply(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        let v = self.replies.get(key);
        Box::pin(async move { Ok(v) })
    }
    fn set_reply(&self, key: &str, reply: &str, ttl: Duration) -> StoreFuture<'_, ()> {
        self.replies.put(key, reply.to_string(), ttl);
        Box::pin(async { Ok(()) })
    }
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
    fn name(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_store_keeps_states_compact_and_reads_them_back() {
        let advisor = crate::data::embedded();
        let (_, state) = advisor.answer("3090 能跑 13B 吗, 4 路并发 8k 上下文", &State::default());
        assert!(state.last.is_some());
        let encoded = serde_json::to_vec(&state).expect("json");
        // What was not said is left out (every field written out takes over 400 bytes).
        assert!(
            encoded.len() < 200,
            "{} bytes: {}",
            encoded.len(),
            String::from_utf8_lossy(&encoded)
        );
        let store = MemoryStore::new(10);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            store
                .save("k", &state, Duration::from_secs(60))
                .await
                .expect("save");
            assert_eq!(store.load("k").await.expect("load"), Some(state));
            assert_eq!(store.load("other").await.expect("load"), None);
        });
    }
}
