//! Prometheus metrics, hand-rolled (a few counters and one histogram). Every series of
//! the known channels and intents exists from start-up at zero, so dashboards and
//! alerts see them before the first event.

use super::channel::Channel;
use crate::store::Health;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub const INTENTS: &[&str] = &[
    "recommend",
    "feasibility",
    "compare",
    "budget",
    "price",
    "faq",
    "help",
    "unknown",
];
/// Reply-time histogram buckets, seconds.
const BUCKETS: &[f64] = &[0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];

#[derive(Default)]
pub struct Metrics {
    /// By channel, then intent, in the order of Channel::ALL and INTENTS.
    questions: Vec<AtomicU64>,
    unanswered: BTreeMap<&'static str, AtomicU64>,
    duplicates: BTreeMap<&'static str, AtomicU64>,
    buckets: Vec<AtomicU64>,
    reply_count: AtomicU64,
    reply_sum_micros: AtomicU64,
    /// Requests by route, then status.
    http: Mutex<BTreeMap<String, BTreeMap<u16, u64>>>,
    pub reload_failures: AtomicU64,
    pub reloads: AtomicU64,
    /// The store's failed calls and whether it is up (kept by `store::Observed`).
    pub store: Arc<Health>,
    /// Platform updates skipped because handling them panicked, by channel (in the
    /// order of Channel::ALL).
    updates_dropped: [AtomicU64; Channel::ALL.len()],
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut m = Metrics::default();
        for c in Channel::ALL {
            m.questions
                .extend(INTENTS.iter().map(|_| AtomicU64::new(0)));
            m.unanswered.insert(c.id(), AtomicU64::new(0));
            m.duplicates.insert(c.id(), AtomicU64::new(0));
        }
        m.buckets = BUCKETS.iter().map(|_| AtomicU64::new(0)).collect();
        m
    }

    pub fn question(&self, channel: Channel, intent: &str, seconds: f64) {
        let c = channel.index();
        if let Some(i) = INTENTS.iter().position(|i| *i == intent) {
            self.questions[c * INTENTS.len() + i].fetch_add(1, Ordering::Relaxed);
        }
        if intent == "unknown" {
            if let Some(c) = self.unanswered.get(channel.id()) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Each reply counts in its own bucket only (one atomic, not one per bucket it
        // falls under); render() adds them up into Prometheus' cumulative buckets.
        if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.reply_count.fetch_add(1, Ordering::Relaxed);
        self.reply_sum_micros
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    pub fn duplicate(&self, channel: Channel) {
        if let Some(c) = self.duplicates.get(channel.id()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn update_dropped(&self, channel: Channel) {
        self.updates_dropped[channel.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub fn http(&self, route: &str, status: u16) {
        let mut m = self.http.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(route) {
            Some(statuses) => *statuses.entry(status).or_insert(0) += 1,
            None => {
                m.insert(route.to_string(), BTreeMap::from([(status, 1)]));
            }
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let v = |a: &AtomicU64| a.load(Ordering::Relaxed);
        o.push_str("# HELP gpu_advisor_questions_total Questions answered, by channel and intent.\n# TYPE gpu_advisor_questions_total counter\n");
        let series = Channel::ALL
            .iter()
            .flat_map(|c| INTENTS.iter().map(move |i| (c.id(), i)));
        for ((c, i), n) in series.zip(&self.questions) {
            let _ = writeln!(
                o,
                "gpu_advisor_questions_total{{channel=\"{c}\",intent=\"{i}\"}} {}",
                v(n)
            );
        }
        o.push_str("# HELP gpu_advisor_unanswered_total Questions the bot did not understand.\n# TYPE gpu_advisor_unanswered_total counter\n");
        for (c, n) in &self.unanswered {
            let _ = writeln!(
                o,
                "gpu_advisor_unanswered_total{{channel=\"{c}\"}} {}",
                v(n)
            );
        }
        o.push_str("# HELP gpu_advisor_duplicates_total Duplicate deliveries answered from cache.\n# TYPE gpu_advisor_duplicates_total counter\n");
        for (c, n) in &self.duplicates {
            let _ = writeln!(
                o,
                "gpu_advisor_duplicates_total{{channel=\"{c}\"}} {}",
                v(n)
            );
        }
        o.push_str("# HELP gpu_advisor_updates_dropped_total Platform updates skipped because handling them panicked.\n# TYPE gpu_advisor_updates_dropped_total counter\n");
        for (c, n) in Channel::ALL.iter().zip(&self.updates_dropped) {
            let _ = writeln!(
                o,
                "gpu_advisor_updates_dropped_total{{channel=\"{}\"}} {}",
                c.id(),
                v(n)
            );
        }
        o.push_str("# HELP gpu_advisor_reply_seconds Time to compute a reply.\n# TYPE gpu_advisor_reply_seconds histogram\n");
        let mut below = 0;
        for (b, n) in BUCKETS.iter().zip(&self.buckets) {
            below += v(n);
            let _ = writeln!(o, "gpu_advisor_reply_seconds_bucket{{le=\"{b}\"}} {below}");
        }
        let count = v(&self.reply_count);
        let _ = writeln!(o, "gpu_advisor_reply_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            o,
            "gpu_advisor_reply_seconds_sum {}",
            v(&self.reply_sum_micros) as f64 / 1e6
        );
        let _ = writeln!(o, "gpu_advisor_reply_seconds_count {count}");
        o.push_str("# HELP gpu_advisor_http_requests_total HTTP requests by route and status.\n# TYPE gpu_advisor_http_requests_total counter\n");
        let http = self.http.lock().unwrap_or_else(|e| e.into_inner());
        if http.is_empty() {
            o.push_str("gpu_advisor_http_requests_total{route=\"/healthz\",status=\"200\"} 0\n");
        }
        for (r, statuses) in http.iter() {
            for (s, n) in statuses {
                let _ = writeln!(
                    o,
                    "gpu_advisor_http_requests_total{{route=\"{r}\",status=\"{s}\"}} {n}"
                );
            }
        }
        o.push_str("# HELP gpu_advisor_reload_failures_total Data reloads rejected for errors.\n# TYPE gpu_advisor_reload_failures_total counter\n");
        let _ = writeln!(
            o,
            "gpu_advisor_reload_failures_total {}",
            v(&self.reload_failures)
        );
        o.push_str("# HELP gpu_advisor_reloads_total Data reloads applied without a restart.\n# TYPE gpu_advisor_reloads_total counter\n");
        let _ = writeln!(o, "gpu_advisor_reloads_total {}", v(&self.reloads));
        o.push_str("# HELP gpu_advisor_store_errors_total Store (Redis) calls that failed; answers went on without context.\n# TYPE gpu_advisor_store_errors_total counter\n");
        let _ = writeln!(
            o,
            "gpu_advisor_store_errors_total {}",
            v(&self.store.errors)
        );
        o.push_str("# HELP gpu_advisor_store_up 1 while the store answers (pinged every 5 s, and on every call).\n# TYPE gpu_advisor_store_up gauge\n");
        let _ = writeln!(o, "gpu_advisor_store_up {}", v(&self.store.up));
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_exists_from_start() {
        let m = Metrics::new();
        let text = m.render();
        for c in Channel::ALL.map(Channel::id) {
            assert!(text.contains(&format!(
                "gpu_advisor_unanswered_total{{channel=\"{c}\"}} 0"
            )));
            assert!(text.contains(&format!(
                "gpu_advisor_questions_total{{channel=\"{c}\",intent=\"recommend\"}} 0"
            )));
        }
        m.question(Channel::Wecom, "unknown", 0.0002);
        let text = m.render();
        assert!(text.contains("gpu_advisor_unanswered_total{channel=\"wecom\"} 1"));
        assert!(text.contains("gpu_advisor_reply_seconds_bucket{le=\"0.0005\"} 1"));
        assert!(text.contains("gpu_advisor_reply_seconds_bucket{le=\"0.0001\"} 0"));
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_end_at_the_count() {
        let m = Metrics::new();
        for s in [0.00005, 0.0003, 0.002, 0.002, 7.0] {
            m.question(Channel::Http, "recommend", s);
        }
        m.http("/v1/ask", 200);
        m.http("/v1/ask", 200);
        m.http("/v1/ask", 400);
        let text = m.render();
        for (le, n) in [
            ("0.0001", 1),
            ("0.0005", 2),
            ("0.001", 2),
            ("0.005", 4),
            ("5", 4),
            ("+Inf", 5),
        ] {
            let line = format!("gpu_advisor_reply_seconds_bucket{{le=\"{le}\"}} {n}\n");
            assert!(text.contains(&line), "{line} in\n{text}");
        }
        assert!(text.contains("gpu_advisor_reply_seconds_count 5\n"));
        assert!(
            text.contains("gpu_advisor_http_requests_total{route=\"/v1/ask\",status=\"200\"} 2\n")
        );
        assert!(
            text.contains("gpu_advisor_http_requests_total{route=\"/v1/ask\",status=\"400\"} 1\n")
        );
    }
}
