//! Many patterns matched at once by a lazy DFA that keeps going when its cache fills.
//!
//! `regex::RegexSet` searches a set with a lazy DFA too, but gives it up for the PikeVM
//! once its cache has been cleared a few times with few bytes searched per state
//! (regex-automata's `minimum_cache_clear_count` of 3). With every intents pattern in one
//! set and each question a new text, a long-running process crosses that line and then
//! reads every question with the PikeVM, several times slower (BENCHMARKS.md, "Pattern
//! sets that stay on the lazy DFA"). This set never gives the DFA up: a full cache is
//! cleared and filled again.

use regex_automata::{
    hybrid::dfa::{Cache, DFA},
    util::pool::Pool,
    Input, MatchKind, PatternSet,
};

type MakeCache =
    Box<dyn Fn() -> Cache + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>;

/// A set of patterns: which of them match a text.
pub struct PatternsSet {
    dfa: Option<DFA>,
    caches: Pool<Cache, MakeCache>,
    /// The same patterns for a text the DFA cannot read (it quits only on a Unicode word
    /// boundary, which the lexicon compiles as ASCII), and when the DFA does not build.
    fallback: regex::RegexSet,
}

/// The lazy DFA's cache per thread: enough that the states of a day's questions are
/// rebuilt rarely.
const CACHE_BYTES: usize = 32 << 20;

impl PatternsSet {
    pub fn new(patterns: &[String], fallback: regex::RegexSet) -> PatternsSet {
        PatternsSet::with_cache(patterns, fallback, CACHE_BYTES)
    }

    fn with_cache(patterns: &[String], fallback: regex::RegexSet, bytes: usize) -> PatternsSet {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(bytes)
                    .minimum_cache_clear_count(None),
            )
            .build_many(patterns)
            .ok();
        let made = dfa.clone();
        let make: MakeCache = Box::new(move || match &made {
            Some(d) => d.create_cache(),
            None => Cache::new(&DFA::always_match().expect("a trivial DFA")),
        });
        PatternsSet {
            dfa,
            caches: Pool::new(make),
            fallback,
        }
    }

    pub fn empty() -> PatternsSet {
        PatternsSet::new(&[], regex::RegexSet::empty())
    }

    /// The numbers of the patterns that match `text`, in pattern order.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        if let Some(dfa) = &self.dfa {
            let mut found = PatternSet::new(dfa.pattern_len());
            let mut cache = self.caches.get();
            if dfa
                .try_which_overlapping_matches(&mut cache, &Input::new(text), &mut found)
                .is_ok()
            {
                return found.iter().map(|p| p.as_usize()).collect();
            }
        }
        self.fallback.matches(text).iter().collect()
    }

    /// The first pattern (in order) that matches `text`.
    pub fn first(&self, text: &str) -> Option<usize> {
        self.matches(text).first().copied()
    }
}

impl std::fmt::Debug for PatternsSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternsSet")
            .field("patterns", &self.fallback.len())
            .field("lazy_dfa", &self.dfa.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(patterns: &[&str]) -> PatternsSet {
        let p: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        PatternsSet::new(&p, regex::RegexSet::new(&p).expect("patterns"))
    }

    #[test]
    fn every_matching_pattern_in_order_as_the_regex_set_finds_them() {
        let s = set(&[
            r"(?-u:\b)a100(?-u:\b)",
            r"显存",
            r"[\p{Han}]{2}卡",
            r"^x",
            r"\d+k",
        ]);
        assert!(
            s.dfa.is_some(),
            "the lazy DFA builds, or the test compares the fallback to itself"
        );
        for text in [
            "a100 显存多大",
            "两张卡 32k",
            "xa100",
            "",
            "a1000 张卡",
            "😀 a100",
        ] {
            let want: Vec<usize> = s.fallback.matches(text).iter().collect();
            assert_eq!(s.matches(text), want, "{text:?}");
        }
        assert_eq!(s.first("两张卡 32k"), Some(2));
        assert_eq!(s.first("nothing"), None);
    }

    #[test]
    fn a_full_cache_is_cleared_not_given_up() {
        // Far more states than a small cache holds: the answers stay those of the
        // regex set on every text.
        let p: Vec<String> = (0..200)
            .map(|i| format!(r"[\p{{Han}}]{{0,3}}{i}[a-z]{{1,4}}"))
            .collect();
        let s = PatternsSet::with_cache(&p, regex::RegexSet::new(&p).expect("patterns"), 1 << 20);
        assert!(s.dfa.is_some());
        for i in 0..2000 {
            let text = format!("预算{}abc 第{}个", i % 250, i);
            let want: Vec<usize> = s.fallback.matches(&text).iter().collect();
            assert_eq!(s.matches(&text), want, "{text:?}");
        }
    }
}
