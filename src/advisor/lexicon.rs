//! The lexicon: the cue and slot patterns of `intents/*.toml`, compiled once.
//!
//! Each file holds `[[cue]]` and `[[slot]]` entries: a name, case-insensitive regular
//! expressions (where `{NUM}` stands for a number as [`numerals::NUM_PATTERN`] reads it,
//! captured as `(?P<n>{NUM})`, or a fixed `value`), and the examples each entry must and
//! must not match. `Lexicon::build` compiles everything and runs those examples, so a bad
//! edit is caught by `gpu-advisor check` and at start-up, with file and key.
//!
//! A `\b` in a pattern is an ASCII word boundary (`(?-u:\b)`): Unicode's `\b` sees no
//! boundary between `int8` and `推理`, since CJK characters are word characters.

use super::catalog::Problem;
use super::numerals::{parse_number, range_low, NUM_PATTERN};

mod fold;
mod names;
mod set;

pub use fold::Fold;
pub use names::{Cue, Name, Slot};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
pub use set::PatternsSet;
use std::collections::HashMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    patterns: Vec<String>,
    #[serde(default)]
    value: Option<f64>,
    /// Matched against the words around one number (written `#`), never against a whole
    /// question: left out of the scan (`quantity.<kind>` entries).
    #[serde(default)]
    around: bool,
    #[serde(default, rename = "match")]
    must_match: Vec<String>,
    #[serde(default)]
    no_match: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    cue: Vec<RawEntry>,
    #[serde(default)]
    slot: Vec<RawEntry>,
    #[serde(default)]
    fold: Vec<fold::RawFold>,
    #[serde(default)]
    typo: Vec<fold::RawTypo>,
    /// Named word lists a pattern of any file uses as `{NAME}` (`PEOPLE = ["users",
    /// "analysts", …]`): one list, kept in one place, for every pattern that needs it.
    #[serde(default)]
    words: std::collections::BTreeMap<String, Vec<String>>,
}

/// One compiled entry.
#[derive(Debug)]
struct Entry {
    patterns: Vec<Regex>,
    value: Option<f64>,
    /// Not in the scan (see `RawEntry::around`).
    around: bool,
}

/// A slot value found in a question: the number and where its match ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub value: f64,
    pub start: usize,
    pub end: usize,
    /// Text right before the match (for a sign check), as a char.
    pub before: Option<char>,
    /// Where the number itself is (the `n` group; the whole match when none).
    pub num: (usize, usize),
    /// The lower bound when the match is a range (a `lo` group: "五六千", "3-5k",
    /// "between 2 and 3 thousand"), read in the upper bound's unit when it has none.
    pub low: Option<f64>,
}

/// Compiled cues and slots, by name, plus one set of every pattern so a question is
/// scanned once for all of them.
#[derive(Debug)]
pub struct Lexicon {
    /// Every entry, by number.
    entries: Vec<Entry>,
    /// Each entry's number, by name.
    numbers: HashMap<String, usize, Names>,
    /// The number of each [`Cue`] and [`Slot`] the parser reads, by [`Name::slot_index`].
    required: Vec<usize>,
    /// All patterns of all entries, in one set.
    all: PatternsSet,
    /// For each pattern of `all`, the number of its entry.
    pattern_entry: Vec<usize>,
    /// For each entry, where its patterns are in `all` (none for `around` entries).
    entry_patterns: Vec<std::ops::Range<usize>>,
    /// Characters and words folded before matching (`intents/normalise.toml`).
    fold: Fold,
}

/// Hashing for the lexicon's tables, looked up by the parser dozens of times per question
/// with names from our own code and intents/ (never user text, so no need for SipHash's
/// resistance to chosen keys): FxHash's multiply-rotate, 8 bytes at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Names;

impl std::hash::BuildHasher for Names {
    type Hasher = NameHasher;
    fn build_hasher(&self) -> NameHasher {
        NameHasher(0)
    }
}

#[derive(Debug, Clone, Copy)]
pub struct NameHasher(u64);

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Lexicon {
    fn default() -> Self {
        Lexicon {
            entries: Vec::new(),
            numbers: HashMap::default(),
            required: Vec::new(),
            all: PatternsSet::empty(),
            pattern_entry: Vec::new(),
            entry_patterns: Vec::new(),
            fold: Fold::default(),
        }
    }
}

/// Several entries' patterns, in order (from [`Lexicon::set`]): each entry one
/// alternation, all of them in one `RegexSet`, so a text is read once (measured against
/// trying the entries one by one: BENCHMARKS.md, "The parts together").
#[derive(Debug)]
pub enum NameSet {
    Set(Box<PatternsSet>),
    /// Entry by entry, when the set does not build within its size limits.
    Entries(Vec<Vec<Regex>>),
}

impl NameSet {
    /// The position (in the names given to [`Lexicon::set`]) of the first entry with a
    /// pattern that matches `text`.
    pub fn first(&self, text: &str) -> Option<usize> {
        match self {
            // The set's matches come in pattern order: the first is the first entry.
            NameSet::Set(set) => set.first(text),
            NameSet::Entries(entries) => entries
                .iter()
                .position(|res| res.iter().any(|re| re.is_match(text))),
        }
    }
}

/// Which entries (by number), and which of their patterns, matched one text (from
/// [`Lexicon::scan`]).
pub struct Scan {
    entries: Vec<bool>,
    patterns: Vec<bool>,
}

/// The matches of one pattern in order, leaving out a number the pattern starts with
/// that is glued to the letters before it: the "3" of "Qwen3", the "2" of "Kimi K2" and the
/// "4" of "Q4_K_M" are part of a name, not quantities. The search goes on from the next
/// character, so "K2，128k" still finds "128k".
struct Unglued<'a> {
    re: &'a Regex,
    text: &'a str,
    at: usize,
}

impl<'a> Unglued<'a> {
    fn new(re: &'a Regex, text: &'a str) -> Self {
        Unglued { re, text, at: 0 }
    }
}

impl<'a> Iterator for Unglued<'a> {
    type Item = regex::Captures<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.at <= self.text.len() {
            let c = self.re.captures_at(self.text, self.at)?;
            let m = c.get(0).expect("group 0");
            let glued = c.name("n").is_some_and(|n| {
                n.start() == m.start()
                    && n.as_str().starts_with(|ch: char| ch.is_ascii_digit())
                    && self.text[..m.start()]
                        .chars()
                        .next_back()
                        .is_some_and(|ch| ch.is_ascii_alphabetic())
            });
            let step = self.text[m.start()..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
            self.at = if glued || m.is_empty() {
                m.start() + step
            } else {
                m.end()
            };
            if !glued {
                return Some(c);
            }
        }
        None
    }
}

impl Entry {
    /// Every match of every pattern that yields a value, by pattern then position, lazily.
    /// `scanned`: which patterns the question's scan matched (the others are skipped, the
    /// matched ones need no match test first).
    fn matches<'a>(
        &'a self,
        text: &'a str,
        k_binary: bool,
        scanned: Option<&'a [bool]>,
    ) -> impl Iterator<Item = Found> + 'a {
        self.patterns
            .iter()
            .enumerate()
            // A match test is much cheaper than captures; most patterns do not match.
            .filter(move |(i, re)| scanned.map_or_else(|| re.is_match(text), |s| s[*i]))
            .map(|(_, re)| re)
            .flat_map(move |re| Unglued::new(re, text))
            .filter_map(move |c| {
                let m = c.get(0).expect("group 0");
                if m.as_str().is_empty() {
                    return None;
                }
                let n = c.name("n");
                let value = match (n, self.value) {
                    (Some(n), _) => parse_number(n.as_str(), k_binary),
                    (None, Some(v)) => Some(v),
                    (None, None) => Some(1.0),
                }?;
                let low = match (c.name("lo"), n) {
                    (Some(lo), Some(n)) => range_low(lo.as_str(), n.as_str(), k_binary),
                    _ => None,
                };
                let num = n.map_or((m.start(), m.end()), |n| {
                    (c.name("lo").map_or(n.start(), |lo| lo.start()), n.end())
                });
                Some(Found {
                    value,
                    start: m.start(),
                    end: m.end(),
                    before: text[..m.start()].chars().next_back(),
                    num,
                    low,
                })
            })
    }

    /// The first match of any pattern that yields a value: its value and span.
    fn find(&self, text: &str, k_binary: bool) -> Option<Found> {
        self.matches(text, k_binary, None).next()
    }
}

impl Lexicon {
    /// Compiles the given intent files (name, text) and runs their examples.
    pub fn build(files: &[(&str, &str)]) -> Result<Lexicon, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut lex = Lexicon::default();
        let mut examples = Vec::new();
        let (mut folds, mut typos) = (Vec::new(), Vec::new());
        let mut raws = Vec::new();
        for (file, text) in files {
            match toml::from_str::<RawFile>(text) {
                Ok(r) => raws.push((file, r)),
                Err(e) => problems.push(Problem {
                    file: file.to_string(),
                    key: "-".into(),
                    message: e.message().to_string(),
                }),
            }
        }
        // `{NAME}` in a pattern: the list's words as alternatives, each escaped.
        let words: Vec<(String, String)> = raws
            .iter()
            .flat_map(|(_, r)| r.words.iter())
            .map(|(name, list)| {
                let alts: Vec<String> = list.iter().map(|w| regex::escape(w)).collect();
                (format!("{{{name}}}"), format!("(?:{})", alts.join("|")))
            })
            .collect();
        for (file, raw) in raws {
            folds.extend(raw.fold.into_iter().map(|f| (file.to_string(), f)));
            typos.extend(raw.typo.into_iter().map(|t| (file.to_string(), t)));
            for (kind, list) in [("cue", raw.cue), ("slot", raw.slot)] {
                for e in list {
                    let key = format!("{kind}[{}]", e.name);
                    let mut patterns = Vec::new();
                    for (i, p) in e.patterns.iter().enumerate() {
                        let mut src = p.replace("\\b", "(?-u:\\b)").replace("{NUM}", NUM_PATTERN);
                        for (name, alts) in &words {
                            src = src.replace(name.as_str(), alts);
                        }
                        match RegexBuilder::new(&src).size_limit(1 << 22).build() {
                            Ok(re) => patterns.push(re),
                            Err(err) => problems.push(Problem {
                                file: file.to_string(),
                                key: format!("{key}.patterns[{i}]"),
                                message: err.to_string(),
                            }),
                        }
                    }
                    if lex.numbers.contains_key(&e.name) {
                        problems.push(Problem {
                            file: file.to_string(),
                            key: key.clone(),
                            message: "defined twice".into(),
                        });
                    }
                    examples.push((
                        file.to_string(),
                        key,
                        lex.entries.len(),
                        e.must_match,
                        e.no_match,
                    ));
                    lex.numbers.insert(e.name, lex.entries.len());
                    lex.entries.push(Entry {
                        patterns,
                        value: e.value,
                        around: e.around,
                    });
                }
            }
        }
        for name in names::required() {
            match lex.numbers.get(name) {
                Some(&n) => lex.required.push(n),
                None => problems.push(Problem {
                    file: "intents/".into(),
                    key: name.into(),
                    message: "required entry is missing: the parser reads it".into(),
                }),
            }
        }
        let (fold, fold_examples) = Fold::build(folds, typos, &mut problems);
        lex.fold = fold;
        for (file, key, [question, folded]) in fold_examples {
            let got = lex.normalise(&question);
            if got != folded || lex.normalise(&got) != got {
                problems.push(Problem {
                    file,
                    key,
                    message: format!("folds {question:?} to {got:?}, not {folded:?}"),
                });
            }
        }
        for (file, key, number, yes, no) in examples {
            let entry = &lex.entries[number];
            for ex in yes {
                if entry.find(&lex.normalise(&ex), false).is_none() {
                    problems.push(Problem {
                        file: file.clone(),
                        key: key.clone(),
                        message: format!("must match {ex:?} but does not"),
                    });
                }
            }
            for ex in no {
                if entry.find(&lex.normalise(&ex), false).is_some() {
                    problems.push(Problem {
                        file: file.clone(),
                        key: key.clone(),
                        message: format!("must not match {ex:?} but does"),
                    });
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut sources = Vec::new();
        for (number, e) in lex.entries.iter().enumerate() {
            let start = sources.len();
            if !e.around {
                sources.extend(e.patterns.iter().map(|re| re.as_str().to_string()));
                lex.pattern_entry
                    .extend(std::iter::repeat_n(number, e.patterns.len()));
            }
            lex.entry_patterns.push(start..sources.len());
        }
        lex.all = PatternsSet::new(
            &sources,
            set::Limits {
                size: 1 << 24,
                // The lazy DFA's cache: 24 MiB runs the corpora 3 % faster than 16 MiB at
                // the same peak memory (BENCHMARKS.md, farm-bench over 2,459 conversations).
                dfa_size: 24 << 20,
            },
        )
        .map_err(|e| {
            vec![Problem {
                file: "intents/".into(),
                key: "-".into(),
                message: format!("pattern set: {e}"),
            }]
        })?;
        Ok(lex)
    }

    /// Scans `text` once for every pattern.
    pub fn scan(&self, text: &str) -> Scan {
        let mut entries = vec![false; self.entries.len()];
        let mut patterns = vec![false; self.pattern_entry.len()];
        for i in self.all.matches(text) {
            entries[self.pattern_entry[i]] = true;
            patterns[i] = true;
        }
        Scan { entries, patterns }
    }

    /// Which of `name`'s patterns the scan matched: the others need no search. A text
    /// derived from the scanned one by blanking words out is read the same way (blanking
    /// only removes text).
    fn scanned<'s>(&self, scan: &'s Scan, name: impl Name) -> &'s [bool] {
        &scan.patterns[self.entry_patterns[self.required[name.slot_index()]].clone()]
    }

    fn entry(&self, name: impl Name) -> &Entry {
        &self.entries[self.required[name.slot_index()]]
    }

    /// Whether the scan found a cue or slot.
    pub fn has_in(&self, scan: &Scan, name: impl Name) -> bool {
        scan.entries[self.required[name.slot_index()]]
    }

    /// As [`find_with`](Self::find_with), running captures only if the scan matched.
    pub fn find_in(
        &self,
        scan: &Scan,
        name: impl Name,
        text: &str,
        k_binary: bool,
    ) -> Option<Found> {
        if self.has_in(scan, name) {
            self.entry(name)
                .matches(text, k_binary, Some(self.scanned(scan, name)))
                .next()
        } else {
            None
        }
    }

    /// The first match of a cue or slot in normalised text.
    pub fn find(&self, name: impl Name, text: &str) -> Option<Found> {
        self.find_with(name, text, false)
    }

    /// As [`find`](Self::find), reading `k` as 1024 (token counts) when `k_binary`.
    pub fn find_with(&self, name: impl Name, text: &str, k_binary: bool) -> Option<Found> {
        self.entry(name).find(text, k_binary)
    }

    /// Every match of a cue or slot (by pattern, then position), when the scan found it.
    pub fn all_in(&self, scan: &Scan, name: impl Name, text: &str, k_binary: bool) -> Vec<Found> {
        if self.has_in(scan, name) {
            self.entry(name)
                .matches(text, k_binary, Some(self.scanned(scan, name)))
                .collect()
        } else {
            Vec::new()
        }
    }

    /// Every match of a cue or slot in normalised text (by pattern, then position).
    pub fn all(&self, name: impl Name, text: &str) -> Vec<Found> {
        self.entry(name).matches(text, false, None).collect()
    }

    /// Whether a cue (or a slot without a number) is present.
    pub fn has(&self, name: impl Name, text: &str) -> bool {
        self.entry(name).patterns.iter().any(|re| re.is_match(text))
    }

    /// A question as the patterns see it: [`normalize`]d, then folded by the tables of
    /// `intents/normalise.toml` (traditional → simplified characters, typos).
    pub fn normalise(&self, text: &str) -> String {
        self.fold.apply(normalize(text))
    }

    /// The patterns of `names`, in that order, to test a short text against them:
    /// [`NameSet::first`] gives the position in `names` of the first entry that matches.
    pub fn set<N: Name>(&self, names: &[N]) -> NameSet {
        // Each entry's patterns as one alternation (already checked one by one at load).
        let joined: Vec<String> = names
            .iter()
            .map(|&n| {
                self.entry(n)
                    .patterns
                    .iter()
                    .map(|re| format!("(?:{})", re.as_str()))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect();
        let limits = set::Limits {
            size: 1 << 24,
            dfa_size: 1 << 24,
        };
        match PatternsSet::new(&joined, limits) {
            Ok(set) => NameSet::Set(Box::new(set)),
            Err(_) => NameSet::Entries(
                names
                    .iter()
                    .zip(&joined)
                    .map(|(&n, joined)| {
                        match RegexBuilder::new(joined).size_limit(1 << 22).build() {
                            Ok(re) => vec![re],
                            Err(_) => self.entry(n).patterns.clone(),
                        }
                    })
                    .collect(),
            ),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Normalises a question for matching: full-width forms to ASCII, lowercase, one space
/// for any run of whitespace.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            '×' | '✕' | '✖' => 'x',
            _ => c,
        };
        if c.is_whitespace() || c.is_control() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        // ASCII and CJK ideographs (most of every question) skip the case tables.
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if ('\u{4E00}'..='\u{9FFF}').contains(&c) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests;
