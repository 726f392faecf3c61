//! The advisor the server answers with, replaceable while it runs: catalog/ and intents/
//! are reloaded on SIGHUP and when their files change. A reload that finds any problem
//! keeps the data already loaded, logs every problem with file and key, and counts it in
//! `gpu_advisor_reload_failures_total`.

use crate::advisor::catalog::Problem;
use crate::advisor::Advisor;
use crate::data;
use crate::metrics::Metrics;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The current advisor. Readers take a cheap `Arc` clone and answer with it, so a reload
/// never waits for an answer in progress and an answer never sees half of a reload.
pub struct Live {
    current: RwLock<Arc<Advisor>>,
    generation: AtomicU64,
}

impl Live {
    pub fn new(advisor: Advisor) -> Live {
        Live {
            current: RwLock::new(Arc::new(advisor)),
            generation: AtomicU64::new(1),
        }
    }

    /// The advisor to answer with now.
    pub fn get(&self) -> Arc<Advisor> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Puts `advisor` in place; answers already running finish on the old one.
    pub fn replace(&self, advisor: Advisor) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(advisor);
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    /// 1 at start, plus one per successful reload.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }
}

/// Where the data files live and what to do on a reload.
pub struct Reloader {
    pub catalog_dir: PathBuf,
    pub intents_dir: PathBuf,
    pub live: Arc<Live>,
    pub metrics: Arc<Metrics>,
}

/// What a reload did.
#[derive(Debug, PartialEq, Eq)]
pub enum Reload {
    Applied,
    Rejected(usize),
}

impl Reloader {
    /// Loads and validates both directories; swaps the advisor only when everything is valid.
    pub fn reload(&self, why: &str) -> Reload {
        match data::load(&self.catalog_dir, &self.intents_dir) {
            Ok((advisor, origin)) => {
                let offers = advisor.catalog.offers.len();
                self.live.replace(advisor);
                self.metrics.reloads.fetch_add(1, Ordering::Relaxed);
                tracing::info!(
                    trigger = why,
                    origin = ?origin,
                    offers,
                    generation = self.live.generation(),
                    "catalog and intents reloaded"
                );
                Reload::Applied
            }
            Err(problems) => {
                self.metrics.reload_failures.fetch_add(1, Ordering::Relaxed);
                log_problems(why, &problems);
                Reload::Rejected(problems.len())
            }
        }
    }

    /// A digest of every file a reload reads (names, sizes and contents), to notice edits
    /// without relying on modification times (ConfigMap volumes swap a symlink instead).
    pub fn fingerprint(&self) -> u64 {
        let mut h = DefaultHasher::new();
        for dir in [&self.catalog_dir, &self.intents_dir] {
            digest_dir(dir, &mut h);
        }
        h.finish()
    }

    /// Runs until `stop` resolves: reloads on SIGHUP, and every `poll` when the files
    /// changed (a zero `poll` turns file watching off).
    pub async fn run(self, poll: Duration, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        #[cfg(unix)]
        let mut hup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "SIGHUP reload unavailable");
                None
            }
        };
        let mut seen = self.fingerprint();
        let mut tick = tokio::time::interval(if poll.is_zero() {
            Duration::from_secs(3600)
        } else {
            poll
        });
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            #[cfg(unix)]
            let hangup = async {
                match hup.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            #[cfg(not(unix))]
            let hangup = std::future::pending::<()>();
            tokio::select! {
                _ = &mut stop => return,
                _ = hangup => {
                    seen = self.fingerprint();
                    self.reload("SIGHUP");
                }
                _ = tick.tick(), if !poll.is_zero() => {
                    let now = self.fingerprint();
                    if now != seen {
                        seen = now;
                        self.reload("file change");
                    }
                }
            }
        }
    }
}

fn log_problems(why: &str, problems: &[Problem]) {
    for p in problems {
        tracing::error!(
            trigger = why,
            file = %p.file,
            key = %p.key,
            problem = %p.message,
            "reload rejected: data problem"
        );
    }
    tracing::error!(
        trigger = why,
        problems = problems.len(),
        "reload rejected: still answering with the data loaded before"
    );
}

fn digest_dir(dir: &Path, h: &mut DefaultHasher) {
    dir.hash(h);
    let Ok(entries) = std::fs::read_dir(dir) else {
        0u8.hash(h);
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.extension().is_some_and(|e| e == "toml") {
            p.hash(h);
            match std::fs::read(&p) {
                Ok(bytes) => bytes.hash(h),
                Err(e) => e.kind().to_string().hash(h),
            }
        }
    }
}
