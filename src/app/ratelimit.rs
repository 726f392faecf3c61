//! Token buckets per key (a user, a chat, a client), with the clock passed in. Bounded:
//! past `max_keys` the idlest keys are dropped (a dropped key starts with a full bucket,
//! which only errs towards answering).

use std::collections::HashMap;

pub struct Buckets {
    per_sec: f64,
    burst: f64,
    max_keys: usize,
    map: HashMap<String, (f64, f64)>,
}

impl Buckets {
    /// `per_min` tokens a minute, up to `burst` at once.
    pub fn new(per_min: f64, burst: f64, max_keys: usize) -> Buckets {
        Buckets {
            per_sec: per_min / 60.0,
            burst: burst.max(1.0),
            max_keys: max_keys.max(1),
            map: HashMap::new(),
        }
    }

    /// Takes one token for `key` at `now` (seconds): Ok, or Err(seconds until one is back).
    pub fn take(&mut self, key: &str, now: f64) -> Result<(), f64> {
        if self.map.len() >= self.max_keys && !self.map.contains_key(key) {
            let cutoff = now - self.burst / self.per_sec.max(1e-9);
            self.map.retain(|_, (_, t)| *t > cutoff);
            if self.map.len() >= self.max_keys {
                if let Some(k) = self
                    .map
                    .iter()
                    .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
                    .map(|(k, _)| k.clone())
                {
                    self.map.remove(&k);
                }
            }
        }
        let (tokens, last) = self.map.entry(key.to_string()).or_insert((self.burst, now));
        *tokens = (*tokens + (now - *last).max(0.0) * self.per_sec).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err((1.0 - *tokens) / self.per_sec.max(1e-9))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refills_over_time() {
        let mut b = Buckets::new(60.0, 2.0, 10);
        assert!(b.take("u", 0.0).is_ok());
        assert!(b.take("u", 0.0).is_ok());
        let wait = b.take("u", 0.0).unwrap_err();
        assert!((wait - 1.0).abs() < 1e-9);
        assert!(b.take("u", 1.0).is_ok());
        assert!(b.take("other", 1.0).is_ok());
    }

    #[test]
    fn bounded() {
        let mut b = Buckets::new(10.0, 1.0, 3);
        for i in 0..100 {
            let _ = b.take(&format!("k{i}"), i as f64);
        }
        assert!(b.map.len() <= 3);
    }
}
