//! The in-memory store: a bounded map whose entries expire. It holds conversation state
//! and duplicate-delivery keys; past its capacity the entries idle longest go first.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct TtlMap<V> {
    capacity: usize,
    inner: Mutex<HashMap<String, (V, Instant)>>,
}

impl<V: Clone> TtlMap<V> {
    pub fn new(capacity: usize) -> TtlMap<V> {
        TtlMap {
            capacity: capacity.max(1),
            inner: Mutex::new(HashMap::new()),
        }
    }

    /// The value under `key` while it has not expired.
    pub fn get(&self, key: &str) -> Option<V> {
        let map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(v, _)| v.clone())
    }

    /// Stores `value` for `ttl`, evicting expired entries, then the soonest to expire,
    /// when full.
    pub fn put(&self, key: String, value: V, ttl: Duration) {
        let now = Instant::now();
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.capacity && !map.contains_key(&key) {
            map.retain(|_, (_, until)| *until > now);
            while map.len() >= self.capacity {
                let Some(k) = map
                    .iter()
                    .min_by_key(|(_, (_, until))| *until)
                    .map(|(k, _)| k.clone())
                else {
                    break;
                };
                map.remove(&k);
            }
        }
        map.insert(key, (value, now + ttl));
    }

    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).len()
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
        m.put("a".into(), 1, Duration::from_secs(60));
        m.put("gone".into(), 2, Duration::ZERO);
        assert_eq!(m.get("a"), Some(1));
        assert_eq!(m.get("gone"), None);
        for i in 0..10 {
            m.put(format!("k{i}"), i, Duration::from_secs(60 + i));
        }
        assert!(m.len() <= 3);
        assert_eq!(m.get("k9"), Some(9));
    }
}
