//! The store port: conversation state (TTL 30 min), duplicate-delivery keys and
//! rate-limit counters, shared by every adapter. Two backends: in memory (default,
//! bounded) and Redis (`REDIS_URL`, for several replicas); one contract suite
//! (`tests/store.rs`) runs against both.

use crate::advisor::State;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// The backend's name, for logs.
    fn name(&self) -> &'static str;
}

/// A bounded map whose entries expire; past its capacity the entries that would expire
/// soonest go first. Large maps are split into shards, each with its own lock and an
/// equal part of the capacity, so that requests on different keys rarely wait for each
/// other and making room (a pass over one shard) stalls one shard's callers for a
/// sixteenth of the time a pass over the whole map would. A key is hashed once per call:
/// the same hash picks the shard and the slot in it.
pub struct TtlMap<V> {
    /// Capacity of each shard.
    capacity: usize,
    shards: Box<[Mutex<Shard<V>>]>,
    /// Randomly keyed SipHash, as the keys come from outside.
    hasher: std::collections::hash_map::RandomState,
}

/// One shard: each entry keeps its key's hash (a table that grows moves entries without
/// hashing their keys again), the key, the value and when it expires.
type Shard<V> = hashbrown::HashTable<Entry<V>>;

struct Entry<V> {
    hash: u64,
    key: Box<str>,
    value: V,
    until: Instant,
}

/// Maps at least this large are sharded.
const SHARDED_FROM: usize = 1024;
const SHARDS: usize = 16;

impl<V: Clone> TtlMap<V> {
    pub fn new(capacity: usize) -> TtlMap<V> {
        let capacity = capacity.max(1);
        let shards = if capacity >= SHARDED_FROM { SHARDS } else { 1 };
        TtlMap {
            capacity: capacity.div_ceil(shards),
            shards: (0..shards).map(|_| Mutex::new(Shard::new())).collect(),
            hasher: Default::default(),
        }
    }

    /// The key's hash and its shard, locked. The table places entries by the hash's low
    /// bits and tags them with its top seven: the shard comes from bits in between.
    fn shard(&self, key: &str) -> (u64, std::sync::MutexGuard<'_, Shard<V>>) {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(key);
        let i = (hash >> 32) as usize % self.shards.len();
        (
            hash,
            self.shards[i].lock().unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// The value under `key` while it has not expired.
    pub fn get(&self, key: &str) -> Option<V> {
        let (hash, map) = self.shard(key);
        map.find(hash, |e| *e.key == *key)
            .filter(|e| e.until > Instant::now())
            .map(|e| e.value.clone())
    }

    /// Makes room in a full shard for a new key: expired entries go, then, if it is
    /// still full of live ones, the eighth that would expire soonest, in one pass, so a
    /// full shard costs O(1) amortised per insert, not a scan each.
    fn make_room(&self, map: &mut Shard<V>, now: Instant) {
        if map.len() < self.capacity {
            return;
        }
        map.retain(|e| e.until > now);
        if map.len() >= self.capacity {
            let mut untils: Vec<Instant> = map.iter().map(|e| e.until).collect();
            let cut = (untils.len() / 8).max(1) - 1;
            let (_, threshold, _) = untils.select_nth_unstable(cut);
            let threshold = *threshold;
            map.retain(|e| e.until > threshold);
        }
    }

    /// Inserts `key` (known to be absent) into its shard, making room when it is full.
    fn insert_new(
        &self,
        map: &mut Shard<V>,
        hash: u64,
        key: &str,
        value: V,
        now: Instant,
        ttl: Duration,
    ) {
        self.make_room(map, now);
        let until = now + ttl;
        let key = key.into();
        map.insert_unique(
            hash,
            Entry {
                hash,
                key,
                value,
                until,
            },
            |e| e.hash,
        );
    }

    /// Stores `value` for `ttl`, making room when its shard is full.
    pub fn put(&self, key: &str, value: V, ttl: Duration) {
        let now = Instant::now();
        let (hash, mut map) = self.shard(key);
        match map.find_mut(hash, |e| *e.key == *key) {
            Some(e) => {
                e.value = value;
                e.until = now + ttl;
            }
            None => self.insert_new(&mut map, hash, key, value, now, ttl),
        }
    }

    /// Inserts only when absent (or expired): true when inserted. The check and the
    /// insert happen under one lock, so of two racing callers only one gets true.
    pub fn put_new(&self, key: &str, value: V, ttl: Duration) -> bool {
        let now = Instant::now();
        let (hash, mut map) = self.shard(key);
        match map.find_mut(hash, |e| *e.key == *key) {
            Some(e) if e.until > now => false,
            Some(e) => {
                e.value = value;
                e.until = now + ttl;
                true
            }
            None => {
                self.insert_new(&mut map, hash, key, value, now, ttl);
                true
            }
        }
    }

    /// Applies `f` to the live value (or `init`), storing the result with `ttl` when new.
    pub fn update(&self, key: &str, init: V, ttl: Duration, f: impl FnOnce(&mut V)) -> V {
        let now = Instant::now();
        let (hash, mut map) = self.shard(key);
        match map.find_mut(hash, |e| *e.key == *key) {
            Some(e) if e.until > now => {
                f(&mut e.value);
                e.value.clone()
            }
            Some(e) => {
                e.value = init;
                f(&mut e.value);
                e.until = now + ttl;
                e.value.clone()
            }
            None => {
                let mut v = init;
                f(&mut v);
                self.insert_new(&mut map, hash, key, v.clone(), now, ttl);
                v
            }
        }
    }

    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

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
        MemoryStore {
            states: TtlMap::new(capacity),
            seen: TtlMap::new(capacity),
            hits: TtlMap::new(capacity),
            settings: TtlMap::new(capacity),
            replies: TtlMap::new(capacity),
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
    fn name(&self) -> &'static str {
        "memory"
    }
}

/// A store that reports on its backend: every failed call counts in
/// `gpu_advisor_store_errors_total`, `gpu_advisor_store_up` says whether the last call
/// worked, and the change each way is logged once (not once per call), so an outage is
/// visible in logs, metrics and alerts while the bot keeps answering without context.
pub struct Observed {
    inner: std::sync::Arc<dyn Store>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

impl Observed {
    pub fn new(
        inner: std::sync::Arc<dyn Store>,
        metrics: std::sync::Arc<crate::metrics::Metrics>,
    ) -> Observed {
        metrics
            .store_up
            .store(1, std::sync::atomic::Ordering::Relaxed);
        Observed { inner, metrics }
    }

    fn watch<'a, T: Send + 'a>(&'a self, call: StoreFuture<'a, T>) -> StoreFuture<'a, T> {
        use std::sync::atomic::Ordering::Relaxed;
        Box::pin(async move {
            let r = call.await;
            let backend = self.inner.name();
            match &r {
                Ok(_) => {
                    if self.metrics.store_up.swap(1, Relaxed) == 0 {
                        tracing::info!(
                            backend,
                            "store reachable again: conversation context restored"
                        );
                    }
                }
                Err(e) => {
                    self.metrics.store_errors.fetch_add(1, Relaxed);
                    if self.metrics.store_up.swap(0, Relaxed) == 1 {
                        tracing::error!(backend, error = %e, "store unavailable: answering without conversation context, duplicate checks or shared rate limits until it returns");
                    }
                }
            }
            r
        })
    }
}

impl Store for Observed {
    fn load(&self, key: &str) -> StoreFuture<'_, Option<State>> {
        self.watch(self.inner.load(key))
    }
    fn save_encoded(&self, key: &str, json: &[u8], ttl: Duration) -> StoreFuture<'_, ()> {
        self.watch(self.inner.save_encoded(key, json, ttl))
    }
    fn first_seen(&self, key: &str, ttl: Duration) -> StoreFuture<'_, bool> {
        self.watch(self.inner.first_seen(key, ttl))
    }
    fn hit(&self, key: &str, window: Duration) -> StoreFuture<'_, u64> {
        self.watch(self.inner.hit(key, window))
    }
    fn setting(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        self.watch(self.inner.setting(key))
    }
    fn set_setting(&self, key: &str, value: &str) -> StoreFuture<'_, ()> {
        self.watch(self.inner.set_setting(key, value))
    }
    fn reply(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        self.watch(self.inner.reply(key))
    }
    fn set_reply(&self, key: &str, reply: &str, ttl: Duration) -> StoreFuture<'_, ()> {
        self.watch(self.inner.set_reply(key, reply, ttl))
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_and_stays_bounded() {
        let m = TtlMap::new(3);
        m.put("a", 1, Duration::from_secs(60));
        m.put("gone", 2, Duration::ZERO);
        assert_eq!(m.get("a"), Some(1));
        assert_eq!(m.get("gone"), None);
        for i in 0..10 {
            m.put(&format!("k{i}"), i, Duration::from_secs(60 + i));
        }
        assert!(m.len() <= 3);
        assert_eq!(m.get("k9"), Some(9));
    }

    #[test]
    fn an_expired_entry_is_replaced_in_place() {
        let m = TtlMap::new(2);
        m.put("a", 1, Duration::ZERO);
        assert!(
            m.put_new("a", 2, Duration::from_secs(60)),
            "expired: new again"
        );
        assert_eq!(m.get("a"), Some(2));
        m.put("b", 5, Duration::ZERO);
        assert_eq!(m.update("b", 10, Duration::from_secs(60), |v| *v += 1), 11);
        assert_eq!(m.len(), 2, "the same two keys, no second slot");
        m.put("a", 3, Duration::from_secs(60));
        assert_eq!(m.get("a"), Some(3));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn a_full_map_drops_the_soonest_to_expire_in_one_batch() {
        let m = TtlMap::new(800);
        for i in 0..800u64 {
            m.put(&format!("k{i}"), i, Duration::from_secs(1000 + i));
        }
        m.put("new", 0, Duration::from_secs(5000));
        assert_eq!(m.len(), 701, "an eighth evicted, then the new one");
        assert_eq!(m.get("k99"), None);
        assert_eq!(m.get("k100"), Some(100));
        assert_eq!(m.get("new"), Some(0));
        // The next inserts have room: no eviction until full again.
        for i in 0..99u64 {
            m.put(&format!("n{i}"), i, Duration::from_secs(2000));
        }
        assert_eq!(m.len(), 800);
        assert_eq!(m.get("k100"), Some(100));
    }

    #[test]
    fn a_sharded_map_stays_bounded_and_keeps_the_newest() {
        let m = TtlMap::new(16_000);
        assert_eq!(m.shards.len(), SHARDS);
        for i in 0..40_000u64 {
            m.put(&format!("c{i}"), i, Duration::from_secs(1000 + i));
        }
        let n = m.len();
        assert!((14_000..=16_000).contains(&n), "{n} entries");
        // Every shard evicts its soonest-to-expire: the newest keys are all there.
        for i in 39_000..40_000u64 {
            assert_eq!(m.get(&format!("c{i}")), Some(i));
        }
        assert_eq!(m.get("c0"), None);
        assert!(m.put_new("fresh", 1, Duration::from_secs(60)));
        assert!(!m.put_new("fresh", 2, Duration::from_secs(60)));
        assert_eq!(m.get("fresh"), Some(1));
        assert_eq!(
            m.update("fresh", 0, Duration::from_secs(60), |v| *v += 10),
            11
        );
    }

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
