//! The metrics wrapper around a store backend: counts failures, says whether the backend
//! is up, and logs each change of state once.

use super::{State, Store, StoreFuture};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// A store that reports on its backend: every failed call counts in
/// `gpu_advisor_store_errors_total`, `gpu_advisor_store_up` says whether the last call
/// worked, and the change each way is logged once (not once per call), so an outage is
/// visible in logs, metrics and alerts while the bot keeps answering without context.
pub struct Observed {
    inner: Arc<dyn Store>,
    health: Arc<Health>,
}

/// What the metrics show of the store: failed calls, and 1 while the last call worked.
#[derive(Debug, Default)]
pub struct Health {
    pub errors: AtomicU64,
    pub up: AtomicU64,
    /// Set by the first call or ping: until then the state is unknown and `up` is 0.
    known: std::sync::atomic::AtomicBool,
}

impl Observed {
    /// Wraps `inner`; the backend counts as up once a call or [`Observed::watch_health`]'s
    /// first ping has answered.
    pub fn new(inner: Arc<dyn Store>, health: Arc<Health>) -> Observed {
        Observed { inner, health }
    }

    /// Pings the backend now and every `period`, so `gpu_advisor_store_up` follows the
    /// backend even while no request comes (an idle replica, the start before the first
    /// message). Runs until `stop` resolves.
    pub async fn watch_health(
        &self,
        period: Duration,
        stop: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(stop);
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = tick.tick() => {
                    let _ = self.ping().await;
                }
            }
        }
    }

    fn watch<'a, T: Send + 'a>(&'a self, call: StoreFuture<'a, T>) -> StoreFuture<'a, T> {
        use std::sync::atomic::Ordering::Relaxed;
        Box::pin(async move {
            let r = call.await;
            let backend = self.inner.name();
            let first = !self.health.known.swap(true, Relaxed);
            match &r {
                Ok(_) => {
                    if self.health.up.swap(1, Relaxed) == 0 {
                        if first {
                            tracing::info!(backend, "store reachable");
                        } else {
                            tracing::info!(
                                backend,
                                "store reachable again: conversation context restored"
                            );
                        }
                    }
                }
                Err(e) => {
                    self.health.errors.fetch_add(1, Relaxed);
                    if self.health.up.swap(0, Relaxed) == 1 || first {
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
    fn ping(&self) -> StoreFuture<'_, ()> {
        self.watch(self.inner.ping())
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}
