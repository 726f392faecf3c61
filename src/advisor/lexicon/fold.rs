//! The folding every question gets before matching, from `intents/normalise.toml`:
//! characters (traditional → simplified Chinese) and words (typos), on top of the
//! built-in folding of [`super::normalize`] (full-width → ASCII, lowercase, spacing).
//! Compiled once; folding twice changes nothing (checked at load).

use super::Problem;
use crate::advisor::lexicon::Names;
use serde::Deserialize;
/// Tables built once from the catalog and intents/, read per question: FxHash (`Names`).
type HashMap<K, V> = std::collections::HashMap<K, V, Names>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFold {
    name: String,
    from: String,
    to: String,
    #[serde(default)]
    examples: Vec<[String; 2]>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTypo {
    from: String,
    to: String,
}

/// "2万3", "9 万 6", "3千5", "1w5": a digit right after 万/千/w counts in the next lower unit;
/// written as the decimal the number readers know ("2.3万"). Not before another digit, a
/// decimal point or a count word ("1万 5 张卡" keeps its five cards); a period after it
/// is no count ("1w2 一个月").
const TAIL_DIGIT: &str = r"([0-9])\s*(万|千|w)\s*([1-9一二两三四五六七八九])(\s*)([^\s0-9.一二两三四五六七八九十百个张台块卡月年天小位路人k]|$|一(?:个月|年|个季度))";

/// "一个w", "两个w": 个w is 万 after a numeral.
const GE_W: &str = r"([0-9一二两三四五六七八九十几])\s*个w([^a-z]|$)";

/// "两千五一个月", "六千一个月": the 一 of 一个月/一年 after a colloquial numeral or a unit
/// is the period's, not a digit of the amount; a space keeps them apart.
/// Digits spoken one by one ("四零九零", "三零九零", "二〇二五"): three or more Chinese digit
/// characters with no unit between them are the digits of a number, as a voice keyboard
/// writes a card's or a year's name.
const SPELLED_DIGITS: &str = r"[零〇一二三四五六七八九]{3,}";

/// A model size said in Chinese numerals ("七十b", "三十二 b"): the digits, so the model
/// names and sizes read it as they read "70b".
const SPOKEN_SIZE: &str = r"([一二两三四五六七八九十百]+)\s*b(?-u:\b)";

/// Numbers said in English words, as a voice keyboard writes them ("thirty two b", "thirty
/// six thousand", "seven b", "eight k"): tens with their unit, the teens, and a lone unit
/// before b/k/hundred/thousand, as digits. A lone unit otherwise stays a word ("two
/// 3090s" is read as a count by the slots).
const SPOKEN_EN: &str = r"(?-u:\b)(?:(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-]+(one|two|three|four|five|six|seven|eight|nine)(?-u:\b))?|(ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)|(one|two|three|four|five|six|seven|eight|nine))(?-u:\b)(?:\s*(b|k)(?-u:\b)|\s+(hundred|thousand)(?-u:\b)|\s+(percent)(?-u:\b))?";

/// "eight by 7b" (Mixtral 8x7B said aloud, after `SPOKEN_EN`): the experts times the size.
const SPOKEN_BY: &str =
    r"(?-u:\b)(one|two|three|four|five|six|seven|eight|nine|[1-9])\s+by\s+([0-9]+b)(?-u:\b)";

/// A share said in words ("百分之十", "百分之 5", "ten percent" after `SPOKEN_EN`): as
/// the "10%" the share patterns read.
const PERCENT: &str = r"百分之\s*([0-9]+(?:\.[0-9]+)?|[零一二两三四五六七八九十百点]+)|([0-9]+(?:\.[0-9]+)?)\s*(?:percent|per cent|pct)(?-u:\b)";

const PERIOD_ONE: &str = r"([千百万亿][一二两三四五六七八九]?)(一(?:个月|年|个季度))";

/// The compiled folding tables.
#[derive(Debug)]
pub struct Fold {
    chars: HashMap<char, char>,
    tail_digit: regex::Regex,
    period_one: regex::Regex,
    ge_w: regex::Regex,
    spelled_digits: regex::Regex,
    spoken_size: regex::Regex,
    spoken_en: regex::Regex,
    spoken_by: regex::Regex,
    percent: regex::Regex,
    /// Typos, longest first; `None` when there are none.
    words: Option<aho_corasick::AhoCorasick>,
    word_to: Vec<String>,
}

impl Default for Fold {
    fn default() -> Fold {
        Fold {
            chars: HashMap::default(),
            tail_digit: regex::Regex::new(TAIL_DIGIT).expect("a fixed pattern"),
            period_one: regex::Regex::new(PERIOD_ONE).expect("a fixed pattern"),
            ge_w: regex::Regex::new(GE_W).expect("a fixed pattern"),
            spelled_digits: regex::Regex::new(SPELLED_DIGITS).expect("a fixed pattern"),
            spoken_size: regex::Regex::new(SPOKEN_SIZE).expect("a fixed pattern"),
            spoken_en: regex::Regex::new(SPOKEN_EN).expect("a fixed pattern"),
            spoken_by: regex::Regex::new(SPOKEN_BY).expect("a fixed pattern"),
            percent: regex::Regex::new(PERCENT).expect("a fixed pattern"),
            words: None,
            word_to: Vec::new(),
        }
    }
}

impl Fold {
    /// Compiles the tables; every problem is reported with its file and key.
    pub(super) fn build(
        folds: Vec<(String, RawFold)>,
        typos: Vec<(String, RawTypo)>,
        problems: &mut Vec<Problem>,
    ) -> (Fold, Vec<(String, String, [String; 2])>) {
        let mut fold = Fold::default();
        let mut examples = Vec::new();
        for (file, f) in folds {
            let key = format!("fold[{}]", f.name);
            let from: Vec<char> = f.from.chars().filter(|c| !c.is_whitespace()).collect();
            let to: Vec<char> = f.to.chars().filter(|c| !c.is_whitespace()).collect();
            if from.len() != to.len() {
                problems.push(Problem {
                    file: file.clone(),
                    key: key.clone(),
                    message: format!(
                        "`from` has {} characters but `to` has {}",
                        from.len(),
                        to.len()
                    ),
                });
                continue;
            }
            for (a, b) in from.into_iter().zip(to) {
                if a != b {
                    fold.chars.insert(a, b);
                }
            }
            examples.extend(
                f.examples
                    .into_iter()
                    .map(|e| (file.clone(), key.clone(), e)),
            );
        }
        let chained: Vec<char> = fold
            .chars
            .values()
            .filter(|c| fold.chars.contains_key(c))
            .copied()
            .collect();
        if !chained.is_empty() {
            problems.push(Problem {
                file: "intents/".into(),
                key: "fold".into(),
                message: format!("folded characters that are folded again: {chained:?}"),
            });
        }
        let mut pairs: Vec<(String, String)> = typos
            .into_iter()
            .map(|(_, t)| (fold.chars_only(&t.from), fold.chars_only(&t.to)))
            .collect();
        pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.chars().count()));
        for (from, to) in &pairs {
            if from.is_empty() || pairs.iter().any(|(f, _)| to.contains(f.as_str())) {
                problems.push(Problem {
                    file: "normalise.toml".into(),
                    key: format!("typo[{from}]"),
                    message: "empty, or its `to` contains a typo".into(),
                });
            }
        }
        if !pairs.is_empty() {
            fold.words = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(pairs.iter().map(|(f, _)| f))
                .ok();
            fold.word_to = pairs.into_iter().map(|(_, t)| t).collect();
        }
        (fold, examples)
    }

    /// [`SPOKEN_EN`] and [`SPOKEN_BY`] applied.
    fn spoken_english(&self, text: String) -> String {
        const UNITS: [&str; 9] = [
            "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        ];
        const TEENS: [&str; 10] = [
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ];
        const TENS: [&str; 8] = [
            "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
        ];
        let value = |words: &[&str], w: &str| words.iter().position(|x| *x == w);
        if !self.spoken_en.is_match(&text) {
            return text;
        }
        let text = self
            .spoken_en
            .replace_all(&text, |c: &regex::Captures<'_>| {
                let n = if let Some(t) = c.get(1) {
                    let unit = c
                        .get(2)
                        .and_then(|u| value(&UNITS, u.as_str()))
                        .map_or(0, |u| u + 1);
                    value(&TENS, t.as_str()).map_or(0, |t| (t + 2) * 10) + unit
                } else if let Some(t) = c.get(3) {
                    value(&TEENS, t.as_str()).map_or(0, |t| t + 10)
                } else {
                    // A lone unit is a number only before its unit or multiplier.
                    if c.get(5).is_none() && c.get(6).is_none() && c.get(7).is_none() {
                        return c[0].to_string();
                    }
                    c.get(4)
                        .and_then(|u| value(&UNITS, u.as_str()))
                        .map_or(0, |u| u + 1)
                };
                if c.get(7).is_some() {
                    return format!("{n}%");
                }
                match (c.get(5), c.get(6).map(|m| m.as_str())) {
                    (Some(unit), _) => format!("{n}{}", unit.as_str()),
                    (None, Some("hundred")) => format!("{}", n * 100),
                    (None, Some(_)) => format!("{}", n * 1000),
                    (None, None) => n.to_string(),
                }
            })
            .into_owned();
        if !text.contains(" by ") || !self.spoken_by.is_match(&text) {
            return text;
        }
        self.spoken_by
            .replace_all(&text, |c: &regex::Captures<'_>| {
                let n =
                    value(&UNITS, &c[1]).map_or_else(|| c[1].to_string(), |u| (u + 1).to_string());
                format!("{n}x{}", &c[2])
            })
            .into_owned()
    }

    fn chars_only(&self, text: &str) -> String {
        super::normalize(text)
            .chars()
            .map(|c| self.chars.get(&c).copied().unwrap_or(c))
            .collect()
    }

    /// Folds an already [`normalize`](super::normalize)d text.
    pub fn apply(&self, text: String) -> String {
        let text = if self.chars.is_empty() || text.is_ascii() {
            text
        } else {
            text.chars()
                .map(|c| self.chars.get(&c).copied().unwrap_or(c))
                .collect()
        };
        let text = match &self.words {
            Some(ac) if ac.is_match(&text) => ac.replace_all(&text, &self.word_to),
            _ => text,
        };
        let text = if !text.is_ascii() && self.spelled_digits.is_match(&text) {
            self.spelled_digits
                .replace_all(&text, |c: &regex::Captures<'_>| {
                    // "三零九零一张": past four digits, the last one before a count word
                    // is the count's ("一张"), not the name's.
                    let run = &c[0];
                    let whole = c.get(0).map_or(0..0, |m| m.range());
                    let counted = text[whole.end..].starts_with(['张', '块', '台', '个', '卡']);
                    let (digits, kept) = match run.char_indices().last() {
                        Some((i, _)) if counted && run.chars().count() > 4 => run.split_at(i),
                        _ => (run, ""),
                    };
                    digits
                        .chars()
                        .map(|d| {
                            crate::advisor::numerals::cn_digit(d)
                                .and_then(|v| char::from_digit(v, 10))
                                .unwrap_or(d)
                        })
                        .chain(kept.chars())
                        .collect::<String>()
                })
                .into_owned()
        } else {
            text
        };
        let text = if !text.is_ascii() && self.spoken_size.is_match(&text) {
            self.spoken_size
                .replace_all(&text, |c: &regex::Captures<'_>| {
                    match crate::advisor::numerals::parse_chinese(&c[1]) {
                        Some(v) if v >= 1.0 => format!("{v}b"),
                        _ => c[0].to_string(),
                    }
                })
                .into_owned()
        } else {
            text
        };
        let text = self.spoken_english(text);
        let text = if (text.contains("百分之") || text.contains("cent") || text.contains("pct"))
            && self.percent.is_match(&text)
        {
            self.percent
                .replace_all(&text, |c: &regex::Captures<'_>| {
                    let n = c.get(2).or(c.get(1)).map_or("", |m| m.as_str());
                    match n
                        .parse::<f64>()
                        .ok()
                        .or_else(|| crate::advisor::numerals::parse_chinese(n))
                    {
                        Some(v) => format!("{v}%"),
                        None => c[0].to_string(),
                    }
                })
                .into_owned()
        } else {
            text
        };
        let text = if text.contains("个w") {
            self.ge_w.replace_all(&text, "${1}万$2").into_owned()
        } else {
            text
        };
        let cjk = text.contains(['万', '千', '百', '亿']);
        let w_digit = text
            .as_bytes()
            .windows(3)
            .any(|b| b[0].is_ascii_digit() && b[1] == b'w' && b[2].is_ascii_digit());
        if !cjk && !w_digit {
            return text;
        }
        let text = if cjk && self.period_one.is_match(&text) {
            self.period_one.replace_all(&text, "$1 $2").into_owned()
        } else {
            text
        };
        if !self.tail_digit.is_match(&text) {
            return text;
        }
        self.tail_digit
            .replace_all(&text, |c: &regex::Captures<'_>| {
                let d = c[3].chars().next().map_or(0, |d| {
                    d.to_digit(10)
                        .or_else(|| crate::advisor::numerals::cn_digit(d))
                        .unwrap_or(0)
                });
                // A period after it stands apart, as `period_one` leaves it.
                let gap = if c[4].is_empty() && c[5].starts_with('一') {
                    " "
                } else {
                    &c[4]
                };
                format!("{}.{d}{}{gap}{}", &c[1], &c[2], &c[5])
            })
            .into_owned()
    }
}
