//! Many patterns matched at once: a literal prefilter picks the patterns a text can match,
//! and a lazy DFA that keeps going when its cache fills reads the patterns it cannot gate.
//!
//! Most intents patterns contain a word every match must begin or end with ("显存", "卡",
//! "budget"). Those words are found in one Aho-Corasick pass, and only the patterns whose
//! word is present are run, each with its own small, quickly warm engine. The patterns
//! with no such word (a number or a character class at both ends) share one lazy DFA. A
//! single DFA over every pattern builds a new state for almost every new question, and
//! determinizing those states was 85 % of a question's time (BENCHMARKS.md, "A literal
//! gate in front of the pattern set").
//!
//! `regex::RegexSet` searches a set with a lazy DFA too, but gives it up for the PikeVM
//! once its cache has been cleared a few times with few bytes searched per state
//! (regex-automata's `minimum_cache_clear_count` of 3). With each question a new text, a
//! long-running process crosses that line and then reads every question with the PikeVM,
//! several times slower (BENCHMARKS.md, "Pattern sets that stay on the lazy DFA"). The DFA
//! here never gives up: a full cache is cleared and filled again.

use aho_corasick::AhoCorasick;
use regex_automata::{
    hybrid::dfa::{Cache, DFA},
    util::pool::Pool,
    Input, MatchKind, PatternSet,
};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use std::sync::OnceLock;

type MakeCache =
    Box<dyn Fn() -> Cache + Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>;

/// A set of patterns: which of them match a text.
pub struct PatternsSet {
    /// The patterns a literal gates, and the literals.
    gate: Option<Gate>,
    /// The patterns no literal gates (all of them without a gate), in one lazy DFA;
    /// `rest_ids[i]` is the number in the whole set of the DFA's pattern `i`.
    rest: Whole,
    rest_ids: Vec<usize>,
    len: usize,
}

/// Every match of a gated pattern begins (or ends) with one of its literals.
struct Gate {
    literals: AhoCorasick,
    /// For each literal, the gated patterns it opens.
    opens: Vec<Vec<usize>>,
    /// Each pattern's own engine, compiled on its first candidate text.
    single: Vec<OnceLock<Option<regex::Regex>>>,
    sources: Vec<String>,
    size: usize,
}

/// The lazy DFA over a list of patterns, with a `RegexSet` fallback.
struct Whole {
    dfa: Option<DFA>,
    caches: Pool<Cache, MakeCache>,
    /// The same patterns for a text the DFA cannot read (it quits only on a Unicode word
    /// boundary, which the lexicon compiles as ASCII), and when the DFA does not build.
    /// Compiled when first needed: with a DFA that reads every text it never is.
    fallback: OnceLock<regex::RegexSet>,
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

/// The shortest literal worth gating on, in bytes: one CJK character, or two ASCII letters.
/// A one-byte literal (a digit, "k") is in nearly every question and gates nothing.
const MIN_LITERAL: usize = 2;

/// The literals every match of `pattern` begins with, or ends with, whichever is the more
/// selective; `None` when neither end has a finite set of literals worth gating on.
fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let best = [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .filter_map(|kind| {
            let seq: Seq = Extractor::new()
                .kind(kind)
                .limit_class(32)
                .limit_total(256)
                .extract(&hir);
            let lits = seq.literals()?;
            let shortest = seq.min_literal_len()?;
            (!lits.is_empty() && shortest >= MIN_LITERAL).then(|| {
                let lits: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
                (shortest, std::cmp::Reverse(lits.len()), lits)
            })
        })
        .max_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)))?;
    Some(best.2)
}

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
        let mut literal_ids: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut literals: Vec<Vec<u8>> = Vec::new();
        let mut opens: Vec<Vec<usize>> = Vec::new();
        let mut rest_ids = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            match required_literals(p) {
                Some(lits) => {
                    for lit in lits {
                        let id = *literal_ids.entry(lit.clone()).or_insert_with(|| {
                            literals.push(lit);
                            opens.push(Vec::new());
                            literals.len() - 1
                        });
                        if opens[id].last() != Some(&i) {
                            opens[id].push(i);
                        }
                    }
                }
                None => rest_ids.push(i),
            }
        }
        let gate = if literals.is_empty() {
            None
        } else {
            match AhoCorasick::new(&literals) {
                Ok(ac) => Some(Gate {
                    literals: ac,
                    opens,
                    single: (0..patterns.len()).map(|_| OnceLock::new()).collect(),
                    sources: patterns.to_vec(),
                    size: limits.size,
                }),
                Err(_) => {
                    rest_ids = (0..patterns.len()).collect();
                    None
                }
            }
        };
        let rest: Vec<String> = rest_ids.iter().map(|&i| patterns[i].clone()).collect();
        Ok(PatternsSet {
            gate,
            rest: Whole::new(&rest, limits, bytes)?,
            rest_ids,
            len: patterns.len(),
        })
    }

    pub fn empty() -> PatternsSet {
        PatternsSet {
            gate: None,
            rest: Whole::empty(),
            rest_ids: Vec::new(),
            len: 0,
        }
    }

    /// The numbers of the patterns that match `text`, in pattern order.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        let mut found: Vec<usize> = self
            .rest
            .matches(text)
            .into_iter()
            .map(|i| self.rest_ids[i])
            .collect();
        if let Some(gate) = &self.gate {
            let mut tried = vec![false; self.len];
            for m in gate.literals.find_overlapping_iter(text) {
                for &p in &gate.opens[m.pattern().as_usize()] {
                    if !std::mem::replace(&mut tried[p], true) && gate.is_match(p, text) {
                        found.push(p);
                    }
                }
            }
            found.sort_unstable();
        }
        found
    }

    /// The first pattern (in order) that matches `text`.
    pub fn first(&self, text: &str) -> Option<usize> {
        self.matches(text).first().copied()
    }
}

impl Gate {
    fn is_match(&self, p: usize, text: &str) -> bool {
        let re = self.single[p].get_or_init(|| {
            match regex::RegexBuilder::new(&self.sources[p])
                .size_limit(self.size)
                .build()
            {
                Ok(re) => Some(re),
                Err(e) => {
                    tracing::error!("pattern does not compile on its own: {e}");
                    None
                }
            }
        });
        re.as_ref().is_some_and(|re| re.is_match(text))
    }
}

impl Whole {
    fn new(patterns: &[String], limits: Limits, bytes: usize) -> Result<Whole, regex::Error> {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(bytes)
                    .minimum_cache_clear_count(None),
            )
            .build_many(patterns)
            .ok();
        let fallback = OnceLock::new();
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
        Ok(Whole {
            dfa,
            caches: Pool::new(make),
            fallback,
            patterns: patterns.to_vec(),
            limits,
        })
    }

    fn empty() -> Whole {
        Whole {
            dfa: None,
            caches: Pool::new(Box::new(|| {
                Cache::new(&DFA::always_match().expect("a trivial DFA"))
            })),
            fallback: OnceLock::from(regex::RegexSet::empty()),
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

    fn matches(&self, text: &str) -> Vec<usize> {
        if self.patterns.is_empty() {
            return Vec::new();
        }
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
}

impl std::fmt::Debug for PatternsSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternsSet")
            .field("patterns", &self.len)
            .field("gated", &(self.len - self.rest_ids.len()))
            .field("lazy_dfa", &self.rest.dfa.is_some())
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
            s.rest.dfa.is_some(),
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
            s.rest.fallback.get().is_none(),
            "a DFA that reads every text never needs the fallback"
        );
        assert_eq!(s.first("两张卡 32k"), Some(2));
        assert_eq!(s.first("nothing"), None);
    }

    #[test]
    fn literals_gate_patterns_at_either_end_and_the_answers_stay_the_same() {
        let patterns = [
            r"(?i)budget\s*\d+",   // a prefix, case-insensitive
            r"\d+\s*(?:张|块)卡",  // a suffix of two literals
            r"显存",               // a literal that is the whole pattern
            r"显存不够|爆显存",    // a literal inside another's
            r"[0-9]+k",            // gated by its last two bytes ("0k" … "9k")
            r"[^ ]+k",             // a one-byte end: no gate
            r"(?:a|b)?100(?:x|y)", // short literals at the start, gated at the end
            r"^",                  // matches the empty text
        ];
        let (s, regex_set) = set(&patterns);
        assert!(
            s.gate.is_some() && s.rest_ids.len() < patterns.len(),
            "some patterns are gated: {s:?}"
        );
        assert!(required_literals(r"[^ ]+k").is_none());
        assert_eq!(required_literals(r"[0-9]+k").map(|l| l.len()), Some(10));
        assert!(required_literals(r"\d+\s*(?:张|块)卡").is_some());
        for text in [
            "",
            "budget 3000",
            "BUDGET3000 两张卡",
            "2 张卡 32k 显存不够",
            "爆显存了",
            "a100x b100y 100x",
            "显",
            "😀 budget",
        ] {
            let want: Vec<usize> = regex_set.matches(text).iter().collect();
            assert_eq!(s.matches(text), want, "{text:?}");
        }
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
        assert!(s.rest.dfa.is_some());
        for i in 0..2000 {
            let text = format!("预算{}abc 第{}个", i % 250, i);
            let want: Vec<usize> = regex_set.matches(&text).iter().collect();
            assert_eq!(s.matches(&text), want, "{text:?}");
        }
    }

    #[test]
    fn a_text_the_dfa_cannot_read_goes_to_the_fallback() {
        // A Unicode word boundary makes the lazy DFA quit on non-ASCII text.
        let (s, regex_set) = set(&[r"\b[a-z]{3}\b", r"卡"]);
        for text in ["gpu 卡", "ä gpu", "gpus"] {
            let want: Vec<usize> = regex_set.matches(text).iter().collect();
            assert_eq!(s.matches(text), want, "{text:?}");
        }
        assert!(s.rest.fallback.get().is_some());
    }

    #[test]
    fn patterns_that_do_not_compile_are_an_error_not_a_panic() {
        let p = vec!["(".to_string()];
        assert!(PatternsSet::new(&p, LIMITS).is_err());
        assert!(PatternsSet::empty().matches("anything").is_empty());
    }
}
