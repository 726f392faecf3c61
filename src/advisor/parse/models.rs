//! Model names in a question, with their qualifiers: the longest catalog alias of
//! `models.toml` (ignoring spaces, `-`, `_`, `.`), and a distilled model named by its
//! parts ("r1 蒸馏版 qwen 7b", "DeepSeek 那个 R1 蒸馏出来的 14B", "ds-r1-distill 32b"):
//! the catalog's distilled model of that size (and base family, when named), never the
//! teacher. Format suffixes (-AWQ, -GPTQ-Int4, 4bit) are precisions (`slots.rs`), so
//! "Yi-34B 4bit" keeps its name. Compiled once from the catalog.

use crate::advisor::catalog::{normalize_alias, Catalog};
use crate::advisor::lexicon::Names;
use crate::advisor::lexicon::{Lexicon, Scan, Slot};
use regex::Regex;
/// Tables built once from the catalog and intents/, read per question: FxHash (`Names`).
type HashMap<K, V> = std::collections::HashMap<K, V, Names>;

/// A distilled catalog model by its parts.
struct Distilled {
    id: String,
    /// The teacher's name as written in the id ("r1").
    teacher: String,
    /// The student's family ("qwen", "llama").
    base: String,
    size_b: f64,
}

/// The catalog's model names, compiled.
pub struct Models {
    re: Option<Regex>,
    by_alias: HashMap<String, String>,
    distilled: Vec<Distilled>,
    /// Short names said alone, with their model (`nicknames` in models.toml).
    nicknames: Vec<(String, String)>,
    size_re: Regex,
}

impl Models {
    pub fn new(cat: &Catalog) -> Models {
        let mut by_alias = HashMap::default();
        let mut alts: Vec<String> = Vec::new();
        let mut distilled = Vec::new();
        let mut nicknames = Vec::new();
        for m in &cat.models {
            nicknames.extend(m.nicknames.iter().map(|n| (n.clone(), m.id.clone())));
            for a in m.aliases.iter().chain(std::iter::once(&m.id)) {
                let n = normalize_alias(a);
                if !n.is_empty() {
                    by_alias.insert(n.clone(), m.id.clone());
                    alts.push(n);
                }
            }
            // "deepseek-r1-distill-qwen-14b": teacher r1, student qwen.
            if let Some((teacher, student)) = m.id.split_once("-distill-") {
                let teacher = teacher.rsplit('-').next().unwrap_or(teacher).to_string();
                let base = student.split('-').next().unwrap_or(student).to_string();
                distilled.push(Distilled {
                    id: m.id.clone(),
                    teacher,
                    base,
                    size_b: m.params_b,
                });
            }
        }
        alts.sort_by_key(|a| std::cmp::Reverse(a.len()));
        alts.dedup();
        let re = (!alts.is_empty()).then(|| {
            let p = alts
                .iter()
                .map(|a| regex::escape(a))
                .collect::<Vec<_>>()
                .join("|");
            Regex::new(&p).expect("escaped aliases compile")
        });
        Models {
            re,
            by_alias,
            distilled,
            nicknames,
            size_re: Regex::new(r"(?-u:\b)([0-9]+(?:\.[0-9]+)?)\s*b(?-u:\b)").expect("fixed"),
        }
    }

    /// The model named in `text`: a distilled model by its parts, else the longest
    /// catalog alias, the first named; after a word for moving to another model, the
    /// first named after it.
    pub fn model(&self, lex: &Lexicon, scan: &Scan, text: &str) -> Option<String> {
        // The model the customer moves to, when one is named after a word for moving.
        if let Some(f) = lex.find_in(scan, Slot::ModelSwitch, text, false) {
            if let Some(id) = self.first_model(lex, scan, &text[f.end..]) {
                return Some(id);
            }
        }
        self.first_model(lex, scan, text)
    }

    fn first_model(&self, lex: &Lexicon, scan: &Scan, text: &str) -> Option<String> {
        if lex.has_in(scan, Slot::ModelDistill) {
            if let Some(id) = self.distilled(text) {
                return Some(id);
            }
        }
        let squeezed = normalize_alias(text);
        // "跑 r1 要几张卡": a nickname alone, as a whole word, when no alias is named.
        let nickname = || {
            self.nicknames
                .iter()
                .find(|(n, _)| contains_version(text, n))
                .map(|(_, id)| id.clone())
        };
        let Some(re) = self.re.as_ref() else {
            return nickname();
        };
        // "qwen3" is not "qwen3.5": a name ending in a digit is not cut from a number,
        // unless a space follows it ("gpt-oss-20b 16G", "GLM-4.5 8张"); a name ending
        // in a size ("yi34b") may be followed by one ("yi34b 4bit").
        let whole = |m: &regex::Match| {
            let after = squeezed[m.end()..].chars().next();
            let ends_digit = m.as_str().ends_with(|c: char| c.is_ascii_digit());
            !(ends_digit
                && after.is_some_and(|c| c.is_ascii_digit())
                && !spaced_after(text, m.as_str()))
        };
        let Some(mut m) = re.find_iter(&squeezed).find(|m| whole(m)) else {
            return nickname();
        };
        // A name that overlaps the one found and runs past it is the more specific mention:
        // "满血版 DeepSeek-V3" names V3, though "满血版deepseek" alone means R1.
        while let Some(next) = squeezed[m.start()..]
            .char_indices()
            .nth(1)
            .and_then(|(i, _)| re.find_at(&squeezed, m.start() + i))
            .filter(|n| n.start() < m.end() && n.end() > m.end() && whole(n))
        {
            m = next;
        }
        self.by_alias.get(m.as_str()).cloned()
    }

    /// The distilled model whose teacher is named and whose size is stated, of the named
    /// student family when one is (the closest size within 10 % otherwise none).
    fn distilled(&self, text: &str) -> Option<String> {
        let sizes: Vec<f64> = self
            .size_re
            .captures_iter(text)
            .filter_map(|c| c[1].parse().ok())
            .collect();
        self.distilled
            .iter()
            .filter(|d| contains_word(text, &d.teacher))
            .filter_map(|d| {
                let off = sizes
                    .iter()
                    .map(|s| (s - d.size_b).abs() / d.size_b)
                    .fold(f64::INFINITY, f64::min);
                let base = contains_word(text, &d.base);
                (off <= 0.1).then_some((!base, off, d))
            })
            .min_by(|a, b| (a.0, a.1).partial_cmp(&(b.0, b.1)).expect("finite"))
            .map(|(_, _, d)| d.id.clone())
    }
}

/// `word` in `text` not inside a longer ASCII word ("r1" in "ds-r1-distill", not in "r10").
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        before.is_none_or(|c| !c.is_ascii_alphanumeric())
            && after.is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

/// `word` as a whole word and a whole version: "k2" in "kimi k2 推理", not in "k2.5".
fn contains_version(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let mut after = text[i + word.len()..].chars();
        let next = after.next();
        before.is_none_or(|c| !c.is_ascii_alphanumeric())
            && next.is_none_or(|c| !c.is_ascii_alphanumeric())
            && !(next == Some('.') && after.next().is_some_and(|c| c.is_ascii_digit()))
    })
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

#[cfg(test)]
mod tests {
    use crate::advisor::fixtures::advisor;

    /// The model `question` names (or "-").
    fn check(question: &str, expected: &str) {
        let p = advisor().parser.parse(question, 7.2);
        let got = p.asked.model.as_deref().unwrap_or("-");
        assert_eq!(got, expected, "{question:?}");
    }

    #[test]
    fn qualifiers_keep_the_model() {
        check("r1 蒸馏版 qwen 7b", "deepseek-r1-distill-qwen-7b");
        check(
            "DeepSeek 那个 R1 蒸馏出来的 14B",
            "deepseek-r1-distill-qwen-14b",
        );
        check("r1 蒸馏的 llama 70b", "deepseek-r1-distill-llama-70b");
        check("ds-r1-distill 32b", "deepseek-r1-distill-qwen-32b");
        check("Yi-34B 4bit 推理", "yi-34b");
        check("Qwen2.5-32B-AWQ", "qwen2.5-32b");
        check("qwen 7b", "qwen-7b");
        check("蒸馏一个 7b 模型", "-");
    }

    #[test]
    fn nicknames_only_as_whole_words() {
        check("跑 r1 要几张卡", "deepseek-r1");
        check("部署 v3 用什么配置", "deepseek-v3");
        check("k2 推理要多少显存", "kimi-k2");
        // Inside another word or number, they are not the model.
        check("yolov3 训练用什么卡", "-");
        check("上下文 8k 2 张 4090", "-");
        check("r10 是什么", "-");
        check("Kimi K2.5 推理要几张 H100", "-");
        // An alias wins over a nickname in the same question.
        check("r1 蒸馏版 qwen 7b", "deepseek-r1-distill-qwen-7b");
        check("deepseek v3 和 r1 选哪个", "deepseek-v3");
    }
}
