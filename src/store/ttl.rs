//! A bounded map with expiring entries: the memory backend's tables. Its clock is a
//! parameter, so tests move time instead of sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    clock: Clock,
}

/// Where a map reads the time: the system's monotonic clock, or one a test moves.
#[derive(Clone, Default)]
pub enum Clock {
    #[default]
    System,
    Manual(Arc<ManualClock>),
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant::now(),
            Clock::Manual(m) => m.now(),
        }
    }
}

/// A clock that stands still until it is advanced.
pub struct ManualClock {
    start: Instant,
    elapsed_ms: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock {
            start: Instant::now(),
            elapsed_ms: AtomicU64::new(0),
        })
    }

    pub fn now(&self) -> Instant {
        self.start + Duration::from_millis(self.elapsed_ms.load(Ordering::Relaxed))
    }

    pub fn advance(&self, by: Duration) {
        self.elapsed_ms
            .fetch_add(by.as_millis() as u64, Ordering::Relaxed);
    }
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
        TtlMap::with_clock(capacity, Clock::System)
    }

    /// A map that reads the time from `clock`.
    pub fn with_clock(capacity: usize, clock: Clock) -> TtlMap<V> {
        let capacity = capacity.max(1);
        let shards = if capacity >= SHARDED_FROM { SHARDS } else { 1 };
        TtlMap {
            capacity: capacity.div_ceil(shards),
            shards: (0..shards).map(|_| Mutex::new(Shard::new())).collect(),
            hasher: Default::default(),
            clock,
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
            .filter(|e| e.until > self.clock.now())
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
        let now = self.clock.now();
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
        let now = self.clock.now();
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
        let now = self.clock.now();
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
}
