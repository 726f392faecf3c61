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
    /// Compiled when first needed: with a DFA that reads every text it never is.
    fallback: std::sync::OnceLock<regex::RegexSet>,
    patterns: Vec<String>,
    limits: Limits,
}

/// `regex`'s compile limits for the fallback set.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub size: usize,
    pub dfa_size: usize,
}

impl Limits {
    fn build(self, patterns: &[String]) -> Result<regex::RegexSet, regex::Error> {
        regex::RegexSetBuilder::new(patterns)
            .size_limit(self.size)
            .dfa_size_limit(self.dfa_size)
            .build()
    }
}

/// The lazy DFA's cache per thread: enough that the states of a day's questions are
/// rebuilt rarely.
const CACHE_BYTES: usize = 32 << 20;

impl PatternsSet {
    /// The set of `patterns`, or the error `regex` gives for them when the lazy DFA does not
    /// build either.
    pub fn new(patterns: &[String], limits: Limits) -> Result<PatternsSet, regex::Error> {
        PatternsSet::with_cache(patterns, limits, CACHE_BYTES)
    }

    fn with_cache(
        patterns: &[String],
        limits: Limits,
        bytes: usize,
    ) -> Result<PatternsSet, regex::Error> {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(bytes)
                    .minimum_cache_clear_count(None),
            )
            .build_many(patterns)
            .ok();
        let fallback = std::sync::OnceLock::new();
        if dfa.is_none() {
            // Without the DFA every text needs the fallback: build it now, and report
            // patterns that do not compile.
            let _ = fallback.set(limits.build(patterns)?);
        }
        let made = dfa.clone();
        let make: MakeCache = Box::new(move || match &made {
            Some(d) => d.create_cache(),
            None => Cache::new(&DFA::always_match().expect("a trivial DFA")),
        });
        Ok(PatternsSet {
            dfa,
            caches: Pool::new(make),
            fallback,
            patterns: patterns.to_vec(),
            limits,
        })
    }

    pub fn empty() -> PatternsSet {
        PatternsSet {
            dfa: None,
            caches: Pool::new(Box::new(|| {
                Cache::new(&DFA::always_match().expect("a trivial DFA"))
            })),
            fallback: std::sync::OnceLock::from(regex::RegexSet::empty()),
            patterns: Vec::new(),
            limits: Limits {
                size: 0,
                dfa_size: 0,
            },
        }
    }

    /// The fallback set, compiled on first use. Every pattern compiled at load (the DFA
    /// built from the same sources), so a failure here is a limit, reported and read as
    /// no match rather than a panic in a reply.
    fn fallback(&self) -> Option<&regex::RegexSet> {
        if let Some(set) = self.fallback.get() {
            return Some(set);
        }
        match self.limits.build(&self.patterns) {
            Ok(set) => Some(self.fallback.get_or_init(|| set)),
            Err(e) => {
                tracing::error!("pattern set fallback does not compile: {e}");
                None
            }
        }
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
        self.fallback()
            .map(|set| set.matches(text).iter().collect())
            .unwrap_or_default()
    }

    /// The first pattern (in order) that matches `text`.
    pub fn first(&self, text: &str) -> Option<usize> {
        self.matches(text).first().copied()
    }
}

impl std::fmt::Debug for PatternsSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternsSet")
            .field("patterns", &self.patterns.len())
            .field("lazy_dfa", &self.dfa.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        size: 1 << 24,
        dfa_size: 1 << 24,
    };

    fn set(patterns: &[&str]) -> (PatternsSet, regex::RegexSet) {
        let p: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        (
            PatternsSet::new(&p, LIMITS).expect("patterns"),
            regex::RegexSet::new(&p).expect("patterns"),
        )
    }

    #[test]
    fn every_matching_pattern_in_order_as_the_regex_set_finds_them() {
        let (s, regex_set) = set(&[
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
            let want: Vec<usize> = regex_set.matches(text).iter().collect();
            assert_eq!(s.matches(text), want, "{text:?}");
        }
        assert!(
            s.fallback.get().is_none(),
            "a DFA that reads every text never needs the fallback"
        );
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
        let s = PatternsSet::with_cache(&p, LIMITS, 1 << 20).expect("patterns");
        let regex_set = regex::RegexSet::new(&p).expect("patterns");
        assert!(s.dfa.is_some());
        for i in 0..2000 {
            let text = format!("预算{}abc 第{}个", i % 250, i);
            let want: Vec<usize> = regex_set.matches(&text).iter().collect();
            assert_eq!(s.matches(&text), want, "{text:?}");
        }
    }

    #[test]
    fn a_text_the_dfa_cannot_read_goes_to_the_fallback() {
        // A Unicode word boundary makes the lazy DFA quit on non-ASCII text.
        let (s, regex_set) = set(&[r"\bgpu\b", r"卡"]);
        for text in ["gpu 卡", "ä gpu", "gpus"] {
            let want: Vec<usize> = regex_set.matches(text).iter().collect();
            assert_eq!(s.matches(text), want, "{text:?}");
        }
        assert!(s.fallback.get().is_some());
    }

    #[test]
    fn patterns_that_do_not_compile_are_an_error_not_a_panic() {
        let p = vec!["(".to_string()];
        assert!(PatternsSet::new(&p, LIMITS).is_err());
        assert!(PatternsSet::empty().matches("anything").is_empty());
    }
}
