//! Card and model names in a question: card aliases from `gpus.toml` (with a count next
//! to them: `两张 A100`, `8xH100`), model aliases from `models.toml` (the longest match,
//! ignoring spaces, `-`, `_`, `.`). Compiled once from the catalog; reading a question
//! allocates only the copy whose card names are blanked out.

use crate::advisor::catalog::{normalize_alias, Catalog};
use crate::advisor::lexicon::{Lexicon, Scan, Slot};
use crate::advisor::workload::Asked;
use regex::Regex;
use std::collections::HashMap;

/// The catalog's card and model names, compiled.
pub struct Entities {
    gpu_re: Regex,
    gpu_by_alias: HashMap<String, String>,
    model_re: Option<Regex>,
    model_by_alias: HashMap<String, String>,
}

impl Entities {
    pub fn new(cat: &Catalog) -> Entities {
        let mut gpu_by_alias = HashMap::new();
        let mut alts: Vec<String> = Vec::new();
        for g in &cat.gpus {
            for a in g.aliases.iter().chain(std::iter::once(&g.id)) {
                let a = a.to_lowercase();
                gpu_by_alias.insert(normalize_alias(&a), g.id.clone());
                alts.push(a);
            }
        }
        alts.sort_by_key(|a| std::cmp::Reverse(a.chars().count()));
        alts.dedup();
        let pattern = alts
            .iter()
            .map(|a| {
                a.split([' ', '-', '_'])
                    .filter(|s| !s.is_empty())
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(r"[\s\-_]*")
            })
            .collect::<Vec<_>>()
            .join("|");
        let gpu_re = Regex::new(&format!("(?:{pattern})")).expect("escaped aliases compile");

        let mut model_by_alias = HashMap::new();
        let mut malts: Vec<String> = Vec::new();
        for m in &cat.models {
            for a in m.aliases.iter().chain(std::iter::once(&m.id)) {
                let n = normalize_alias(a);
                if !n.is_empty() {
                    model_by_alias.insert(n.clone(), m.id.clone());
                    malts.push(n);
                }
            }
        }
        malts.sort_by_key(|a| std::cmp::Reverse(a.len()));
        malts.dedup();
        let model_re = (!malts.is_empty()).then(|| {
            let p = malts
                .iter()
                .map(|a| regex::escape(a))
                .collect::<Vec<_>>()
                .join("|");
            Regex::new(&p).expect("escaped aliases compile")
        });
        Entities {
            gpu_re,
            gpu_by_alias,
            model_re,
            model_by_alias,
        }
    }

    /// Reads the cards named in `text` (and a count next to the first) into `a`; returns
    /// `text` with the card names blanked out, so "910B" is not read as a model size.
    pub fn cards(&self, lex: &Lexicon, scan: &Scan, text: &str, a: &mut Asked) -> String {
        let mut blanked = text.to_string();
        for m in self.gpu_re.find_iter(text) {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let prefix = &text[..m.start()];
            let times = prefix.trim_end().ends_with(['x', '*'])
                && prefix
                    .trim_end()
                    .trim_end_matches(['x', '*'])
                    .trim_end()
                    .ends_with(|c: char| c.is_ascii_digit());
            let glued_before = before.is_some_and(|c| c.is_ascii_alphanumeric()) && !times;
            // A plural ("two 3090s", "A100s") is still the card.
            let plural = after == Some('s')
                && text[m.end() + 1..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric());
            let glued_after = after.is_some_and(|c| c.is_ascii_alphanumeric()) && !plural;
            if glued_before || glued_after {
                continue;
            }
            let Some(id) = self.gpu_by_alias.get(&normalize_alias(m.as_str())) else {
                continue;
            };
            blanked.replace_range(m.range(), &" ".repeat(m.len()));
            if a.gpus.contains(id) {
                continue;
            }
            if a.gpus.is_empty() {
                let start = prefix.len().saturating_sub(24);
                let start = (start..=prefix.len())
                    .find(|i| prefix.is_char_boundary(*i))
                    .unwrap_or(0);
                let count = lex
                    .find(Slot::CardCountBefore, &prefix[start..])
                    .or_else(|| lex.find(Slot::CardCountAfter, &text[m.end()..]))
                    .map(|f| f.value);
                if let Some(c) = count.filter(|c| *c >= 1.0 && *c <= 64.0) {
                    a.gpu_count = Some(c as u32);
                }
            }
            a.gpus.push(id.clone());
        }
        a.gpu = a.gpus.first().cloned();
        if a.gpu_count.is_none() {
            a.gpu_count = [Slot::CardCount, Slot::CardCountPair, Slot::CardCountSingle]
                .iter()
                .find_map(|&s| lex.find_in(scan, s, text, false))
                .map(|f| f.value)
                .filter(|c| *c >= 1.0 && *c <= 64.0)
                .map(|c| c as u32);
        }
        blanked
    }

    /// The model: the longest catalog alias in `text`.
    pub fn model(&self, text: &str) -> Option<String> {
        let squeezed = normalize_alias(text);
        let re = self.model_re.as_ref()?;
        for m in re.find_iter(&squeezed) {
            let after = squeezed[m.end()..].chars().next();
            // "qwen3" is not "qwen3.5"; but a name ending in its size may be followed by
            // a separate number ("gpt-oss-20b 16G", "GLM-4.5 8张").
            let ends_in_digit = m.as_str().ends_with(|c: char| c.is_ascii_digit());
            if ends_in_digit
                && after.is_some_and(|c| c.is_ascii_digit())
                && !spaced_after(text, m.as_str())
            {
                continue;
            }
            return self.model_by_alias.get(m.as_str()).cloned();
        }
        None
    }
}

/// Whether the first place `text` spells `alias` (ignoring case, spaces, `-`, `_`, `.`)
/// is followed by whitespace before the next letter or digit.
fn spaced_after(text: &str, alias: &str) -> bool {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for start in 0..chars.len() {
        let mut want = alias.chars().peekable();
        let mut i = start;
        while i < chars.len() && want.peek().is_some() {
            let c = chars[i].1;
            if matches!(c, ' ' | '-' | '_' | '.' | '\u{3000}') && i > start {
                i += 1;
                continue;
            }
            let lower = c.to_lowercase().next().unwrap_or(c);
            if Some(&lower) != want.peek() {
                break;
            }
            want.next();
            i += 1;
        }
        if want.peek().is_none() {
            return chars.get(i).is_some_and(|(_, c)| c.is_whitespace());
        }
    }
    false
}
