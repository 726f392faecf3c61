//! Reloading catalog/ and intents/ while serving: on SIGHUP and when their files change.
//! A reload that finds any problem keeps the data already loaded, logs every problem
//! with file and key, and counts it in `gpu_advisor_reload_failures_total`.

use super::live::Live;
use super::metrics::Metrics;
use crate::advisor::catalog::Problem;
use crate::data;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

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
    /// changed (a zero `poll` turns file watching off). A reload reads and compiles every
    /// file, seconds of CPU on a busy machine: it runs on tokio's blocking pool, so the
    /// workers that answer requests never wait for it.
    pub async fn run(self, poll: Duration, stop: impl std::future::Future<Output = ()>) {
        let this = Arc::new(self);
        let reload = |why: &'static str| {
            let this = Arc::clone(&this);
            async move {
                if let Err(e) = tokio::task::spawn_blocking(move || this.reload(why)).await {
                    tracing::error!(error = %e, trigger = why, "reload task failed");
                }
            }
        };
        tokio::pin!(stop);
        #[cfg(unix)]
        let mut hup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "SIGHUP reload unavailable");
                None
            }
        };
        let mut seen = this.fingerprint();
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
                    seen = this.fingerprint();
                    reload("SIGHUP").await;
                }
                _ = tick.tick(), if !poll.is_zero() => {
                    let now = this.fingerprint();
                    if now != seen {
                        seen = now;
                        reload("file change").await;
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
