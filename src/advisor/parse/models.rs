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

/// Words in a model id for a variant of its family: "qwen 32b" is not the coder.
const VARIANTS: [&str; 4] = ["distill", "coder", "vl", "vision"];

/// A catalog model by its family's name and the size in its id ("qwen3-235b-a22b": qwen,
/// 235), for a question that names the two apart ("qwen 最新的那个 235B 的").
struct Sized {
    id: String,
    /// The family's name without its version or variant ("qwen" for qwen3, qwen2.5-coder).
    base: String,
    size_b: f64,
    /// A variant the family's plain name does not mean ([`VARIANTS`]).
    variant: Option<&'static str>,
    released: String,
}

/// The catalog's model names, compiled.
pub struct Models {
    re: Option<Regex>,
    by_alias: HashMap<String, String>,
    distilled: Vec<Distilled>,
    /// Short names said alone, with their model (`nicknames` in models.toml).
    nicknames: Vec<(String, String)>,
    sized: Vec<Sized>,
    size_re: Regex,
    /// The catalog's families, normalised ("qwen3", "llama31").
    families: Vec<String>,
}

impl Models {
    /// The size in a catalog model's id ("qwen2.5-coder-7b": 7), when it has one.
    pub fn id_size(&self, id: &str) -> Option<f64> {
        self.sized.iter().find(|s| s.id == id).map(|s| s.size_b)
    }

    pub fn new(cat: &Catalog) -> Models {
        let mut by_alias = HashMap::default();
        let mut alts: Vec<String> = Vec::new();
        let mut distilled = Vec::new();
        let mut nicknames = Vec::new();
        let mut sized = Vec::new();
        let size_re = Regex::new(r"(?-u:\b)([0-9]+(?:\.[0-9]+)?)\s*b(?-u:\b)").expect("fixed");
        for m in &cat.models {
            let base = m
                .family
                .split('-')
                .next()
                .unwrap_or(&m.family)
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
            // The first size in the id, as a whole token: "235b" of "qwen3-235b-a22b".
            let size =
                m.id.split('-')
                    .find_map(|t| t.strip_suffix('b').and_then(|n| n.parse::<f64>().ok()));
            if let (Some(size_b), false) = (size, base.is_empty()) {
                if m.id.starts_with(base) {
                    let variant = VARIANTS
                        .iter()
                        .find(|v| m.id.split('-').any(|t| t == **v))
                        .copied();
                    sized.push(Sized {
                        id: m.id.clone(),
                        base: base.to_string(),
                        size_b,
                        variant,
                        released: m.released.clone(),
                    });
                }
            }
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
        let mut families: Vec<String> = cat
            .models
            .iter()
            .map(|m| normalize_alias(&m.family))
            .collect();
        families.sort();
        families.dedup();
        Models {
            re,
            by_alias,
            distilled,
            nicknames,
            sized,
            size_re,
            families,
        }
    }

    /// Whether `name` is one of the catalog's families ("Qwen3"), not a model of it.
    pub fn is_family(&self, name: &str) -> bool {
        self.families.binary_search(&normalize_alias(name)).is_ok()
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
        let nickname = || nickname().or_else(|| self.by_family_and_size(text));
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

    /// The sizes stated in `text` ("235b", "7 b"), in billions.
    fn sizes(&self, text: &str) -> Vec<f64> {
        self.size_re
            .captures_iter(text)
            .filter_map(|c| c[1].parse().ok())
            .collect()
    }

    /// The newest catalog model of a family named with no version ("qwen", not "qwen4")
    /// whose id has the size stated apart from it ("qwen 最新的那个 235B 的，MoE 那个":
    /// qwen3-235b-a22b; "llama 最新那个 70B": llama-3.3-70b); a variant (coder, vl,
    /// distill) only when the family has no plain model of that size or the variant is
    /// named.
    fn by_family_and_size(&self, text: &str) -> Option<String> {
        let sizes = self.sizes(text);
        if sizes.is_empty() {
            return None;
        }
        let named = |base: &str| {
            text.match_indices(base).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let rest = &text[i + base.len()..];
                // "qwen4 72b" and "llama 5 70b" name versions the catalog does not know.
                let version = rest
                    .trim_start_matches([' ', '-', '_', '.', 'v'])
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit())
                    && !self.size_re.find(rest).is_some_and(|m| {
                        rest[..m.start()]
                            .trim_matches([' ', '-', '_', '.'])
                            .is_empty()
                    });
                // "llama-factory", "llama.cpp": a tool's name, not the family's.
                let mut after = rest.chars();
                let joined = matches!(after.next(), Some('-' | '.' | '_'))
                    && after.next().is_some_and(|c| c.is_ascii_alphabetic());
                before.is_none_or(|c| !c.is_ascii_alphanumeric())
                    && rest
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_ascii_alphanumeric())
                    && !version
                    && !joined
            })
        };
        let fits: Vec<&Sized> = self
            .sized
            .iter()
            .filter(|m| sizes.iter().any(|&s| (s - m.size_b).abs() < 1e-9) && named(&m.base))
            .collect();
        let plain = fits.iter().any(|m| m.variant.is_none());
        fits.into_iter()
            .filter(|m| !plain || m.variant.is_none_or(|v| contains_word(text, v)))
            .max_by(|a, b| a.released.cmp(&b.released).then(b.id.cmp(&a.id)))
            .map(|m| m.id.clone())
    }

    /// The distilled model whose teacher is named and whose size is stated, of the named
    /// student family when one is (the closest size within 10 % otherwise none).
    fn distilled(&self, text: &str) -> Option<String> {
        let sizes = self.sizes(text);
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
    fn a_family_and_a_size_said_apart_name_its_newest_model() {
        check(
            "qwen 最新的那个 235B 的，MoE 那个，部署要多少卡",
            "qwen3-235b-a22b",
        );
        check("Qwen 235B 部署要多少卡", "qwen3-235b-a22b");
        check("llama 最新那个 70B 的推理用什么卡", "llama-3.3-70b");
        check("deepseek 70b 本地部署", "deepseek-r1-distill-llama-70b");
        // An alias still names its own model.
        check("qwen 7b", "qwen-7b");
        // A version the catalog does not know, or no family model of that size: none.
        check("qwen4 72b 推理", "-");
        check("llama 5 70b 推理", "-");
        check("qwen 397b 推理", "-");
        check("3090 能全参微调 7B 吗，用 LLaMA-Factory", "-");
        check("llama.cpp 跑 70b 要多少显存", "-");
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
