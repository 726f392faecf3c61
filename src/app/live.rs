//! The advisor the app answers with, replaceable while it runs (`reload` swaps it), and
//! the cache of first questions' answers. No IO here.

use crate::advisor::{Advisor, Answer, State};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// An answer, the conversation state it leaves, and its JSON body (CONTRACT.md §2),
/// serialised at most once however many requests the answer serves.
#[derive(Debug)]
pub struct Answered {
    pub answer: Answer,
    pub state: State,
    json: OnceLock<bytes::Bytes>,
    state_json: OnceLock<Box<[u8]>>,
}

impl Answered {
    pub fn new(answer: Answer, state: State) -> Answered {
        Answered {
            answer,
            state,
            json: OnceLock::new(),
            state_json: OnceLock::new(),
        }
    }

    /// The state it leaves, as the store keeps it ([`crate::store::encode_state`]),
    /// encoded at most once.
    pub fn state_json(&self) -> &[u8] {
        self.state_json
            .get_or_init(|| crate::store::encode_state(&self.state).into_boxed_slice())
    }

    /// The answer as the JSON of `ask --json` and `/v1/ask`.
    pub fn json(&self) -> bytes::Bytes {
        self.json
            .get_or_init(|| {
                // Serialising a tree of plain structs, strings and finite numbers
                // cannot fail; an empty object stands in should it ever.
                serde_json::to_vec(&self.answer)
                    .map_or_else(|_| bytes::Bytes::from_static(b"{}"), bytes::Bytes::from)
            })
            .clone()
    }
}

/// The current advisor. Readers take a cheap `Arc` clone and answer with it, so a reload
/// never waits for an answer in progress and an answer never sees half of a reload.
pub struct Live {
    current: RwLock<(Arc<Advisor>, u64)>,
    /// First questions' answers, by text, for the generation that computed them.
    cache: Mutex<HashMap<Box<str>, Cached>>,
    hits: AtomicU64,
    misses: AtomicU64,
    /// The generation, sent on every replacement (adapters that mirror the catalog
    /// elsewhere, such as Discord's command choices, follow it).
    changes: tokio::sync::watch::Sender<u64>,
}

/// A first question's answer and the advisor generation that computed it.
type Cached = (u64, Arc<Answered>);

/// At most this many first-question answers are cached (about 8 KB each with their JSON).
pub const CACHE_ENTRIES: usize = 2048;
/// Longer questions are answered without the cache.
pub const CACHE_MAX_QUESTION_BYTES: usize = 512;

impl Live {
    pub fn new(advisor: Advisor) -> Live {
        Live {
            current: RwLock::new((Arc::new(advisor), 1)),
            cache: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            changes: tokio::sync::watch::Sender::new(1),
        }
    }

    /// Notified with the new generation each time the advisor is replaced.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn current(&self) -> (Arc<Advisor>, u64) {
        let c = self.current.read().unwrap_or_else(|e| e.into_inner());
        (Arc::clone(&c.0), c.1)
    }

    /// The advisor to answer with now.
    pub fn get(&self) -> Arc<Advisor> {
        self.current().0
    }

    /// Puts `advisor` in place; answers already running finish on the old one.
    pub fn replace(&self, advisor: Advisor) {
        let generation = {
            let mut c = self.current.write().unwrap_or_else(|e| e.into_inner());
            let generation = c.1 + 1;
            *c = (Arc::new(advisor), generation);
            generation
        };
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.changes.send_replace(generation);
    }

    /// 1 at start, plus one per successful reload.
    pub fn generation(&self) -> u64 {
        self.current().1
    }

    /// [`Advisor::answer`] with the current advisor, as owned values.
    pub fn answer(&self, question: &str, state: &State) -> (Answer, State) {
        let a = self.answered(question, state);
        match Arc::try_unwrap(a) {
            Ok(a) => (a.answer, a.state),
            Err(a) => (a.answer.clone(), a.state.clone()),
        }
    }

    /// [`Advisor::answer`] with the current advisor. The core is a pure function of the
    /// question, the state and the loaded data, so a question that opens a conversation
    /// (the common case in tickets and groups: the same few questions again and again)
    /// is answered from a bounded cache, which a reload empties; a cached answer keeps
    /// its JSON once serialised. Follow-ups, whose answers depend on the conversation,
    /// are always computed.
    pub fn answered(&self, question: &str, state: &State) -> Arc<Answered> {
        let (advisor, generation) = self.current();
        let cacheable =
            question.len() <= CACHE_MAX_QUESTION_BYTES && state.turns == 0 && state.last.is_none();
        if !cacheable {
            let (answer, next) = advisor.answer(question, state);
            return Arc::new(Answered::new(answer, next));
        }
        let hit = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(question)
            .filter(|c| c.0 == generation)
            .map(|c| Arc::clone(&c.1));
        if let Some(a) = hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return a;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let (answer, next) = advisor.answer(question, state);
        let entry = Arc::new(Answered::new(answer, next));
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_ENTRIES {
            // Hash order is arbitrary: this drops an arbitrary eighth.
            let drop: Vec<Box<str>> = cache.keys().take(CACHE_ENTRIES / 8).cloned().collect();
            for k in drop {
                cache.remove(&k);
            }
        }
        // An answer computed on an advisor that a reload has replaced meanwhile is not kept.
        if generation == self.generation() {
            cache.insert(question.into(), (generation, Arc::clone(&entry)));
        }
        entry
    }

    /// The cache's counters in the Prometheus text format.
    pub fn render_metrics(&self) -> String {
        format!(
            "# HELP gpu_advisor_answer_cache_total First questions answered from the answer cache (hit) or computed (miss).\n\
             # TYPE gpu_advisor_answer_cache_total counter\n\
             gpu_advisor_answer_cache_total{{result=\"hit\"}} {}\n\
             gpu_advisor_answer_cache_total{{result=\"miss\"}} {}\n\
             # HELP gpu_advisor_answer_cache_entries Answers held in the answer cache.\n\
             # TYPE gpu_advisor_answer_cache_entries gauge\n\
             gpu_advisor_answer_cache_entries {}\n",
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
            self.cached()
        )
    }

    /// How many answers the cache holds.
    pub fn cached(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data;

    #[test]
    fn first_questions_are_cached_and_follow_ups_are_not() {
        let live = Live::new(data::embedded());
        let q = "4090 能跑 70B 吗";
        let (a, s) = live.answer(q, &State::default());
        assert_eq!(live.cached(), 1);
        let (b, t) = live.answer(q, &State::default());
        assert_eq!(live.cached(), 1);
        assert_eq!(a.reply(), b.reply());
        assert_eq!(s, t);
        // The same answer as the uncached core.
        let (c, u) = data::embedded().answer(q, &State::default());
        assert_eq!((c.reply(), u), (b.reply(), t));

        // A follow-up depends on the conversation: computed, not cached.
        let (f, _) = live.answer("INT4 呢", &s);
        assert_eq!(live.cached(), 1);
        assert_eq!(f.reply(), data::embedded().answer("INT4 呢", &s).0.reply());
        // Long questions bypass the cache.
        live.answer(&"显存".repeat(CACHE_MAX_QUESTION_BYTES), &State::default());
        assert_eq!(live.cached(), 1);
    }

    #[test]
    fn a_reload_empties_the_cache_and_answers_use_the_new_data() {
        let live = Live::new(data::embedded());
        let q = "T4 多少钱一个月";
        let price = |a: &Answer| a.recommendation.as_ref().map(|r| r.monthly_cny.min);
        let before = price(&live.answer(q, &State::default()).0);
        assert!(before.is_some(), "{q} names a card and gets a price");
        let mut changed = data::embedded();
        for o in changed.catalog.offers.iter_mut().filter(|o| o.id == "t4") {
            o.price.min += 11.0;
            o.price.max += 11.0;
        }
        live.replace(changed);
        assert_eq!(live.cached(), 0);
        assert_eq!(live.generation(), 2);
        let after = price(&live.answer(q, &State::default()).0);
        assert_eq!(after, before.map(|p| p + 11.0));
    }

    #[test]
    fn a_cached_answer_is_serialised_once_and_matches_the_answer() {
        let live = Live::new(data::embedded());
        let q = "微调 Qwen-14B 要什么卡?";
        let first = live.answered(q, &State::default());
        let a = first.json();
        let b = live.answered(q, &State::default()).json();
        // The same bytes, not an equal copy: the hit did not serialise again.
        assert_eq!(a.as_ptr(), b.as_ptr());
        let expected = serde_json::to_vec(&data::embedded().answer(q, &State::default()).0);
        assert_eq!(a.as_ref(), expected.expect("serialisable").as_slice());
        // A follow-up is its own answer with its own JSON.
        let f = live.answered("INT4 呢", &first.state);
        assert_ne!(f.json(), a);
        let v: serde_json::Value = serde_json::from_slice(&f.json()).expect("JSON");
        assert_eq!(v["workload"]["precision"], "int4");
    }

    #[test]
    fn the_cache_stays_bounded() {
        let live = Live::new(data::embedded());
        for i in 0..CACHE_ENTRIES + 100 {
            live.answer(&format!("{i}B 模型推理要什么卡"), &State::default());
        }
        assert!(live.cached() <= CACHE_ENTRIES);
        assert!(live.cached() >= CACHE_ENTRIES * 7 / 8);
    }
}
