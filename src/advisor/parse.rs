//! The question parser: free text → what it states (`Asked`), which cues it carries and
//! which knowledge topics it touches. Pure: the lexicon and catalog are compiled once by
//! `Parser::new`; parsing allocates only the normalised copy of the question.

use super::catalog::{normalize_alias, Catalog};
use super::lexicon::{normalize, Cue, Lexicon, Slot};
use super::workload::{Asked, Precision, Task};
use regex::Regex;
use std::collections::HashMap;

/// Questions longer than this many bytes are cut (at a char boundary) before parsing:
/// chat questions are short, and the cap bounds the work per message.
pub const MAX_QUESTION_BYTES: usize = 2000;
/// Sizes beyond this are absurd for a rental question (the largest public models are
/// ~2T parameters).
pub const MAX_PARAMS_B: f64 = 10_000.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Zh,
    En,
}

impl Lang {
    pub fn id(self) -> &'static str {
        match self {
            Lang::Zh => "zh",
            Lang::En => "en",
        }
    }
}

/// Something the question states that cannot be right.
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    NegativeSize(f64),
    HugeSize(f64),
    HugeNumber(&'static str, f64),
}

/// What one question says, before any conversation context.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub lang: Option<Lang>,
    pub empty: bool,
    pub asked: Asked,
    pub cues: Vec<Cue>,
    /// Topic ids by descending score.
    pub topics: Vec<String>,
    pub invalid: Option<Invalid>,
    /// Slots that modify a workload were stated (for follow-ups).
    pub modifiers: bool,
    /// Written as a question (ends with ? / 吗 / 呢).
    pub question: bool,
}

impl Parsed {
    pub fn cue(&self, cue: Cue) -> bool {
        self.cues.contains(&cue)
    }
    pub fn lang(&self) -> Lang {
        self.lang.unwrap_or(Lang::Zh)
    }
}

/// The compiled parser.
pub struct Parser {
    lex: Lexicon,
    gpu_re: Regex,
    gpu_by_alias: HashMap<String, String>,
    model_re: Option<Regex>,
    model_by_alias: HashMap<String, String>,
    /// Every topic trigger in one automaton; `trigger_topic[i]` is pattern i's topic.
    triggers: aho_corasick::AhoCorasick,
    trigger_topic: Vec<usize>,
    topic_ids: Vec<String>,
}

impl Parser {
    pub fn new(lex: Lexicon, cat: &Catalog) -> Parser {
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
        let mut patterns = Vec::new();
        let mut trigger_topic = Vec::new();
        for (ti, t) in cat.topics.iter().enumerate() {
            for trig in &t.triggers {
                patterns.push(trig.to_lowercase());
                trigger_topic.push(ti);
            }
        }
        let triggers = aho_corasick::AhoCorasick::new(&patterns).expect("trigger automaton builds");
        let topic_ids = cat.topics.iter().map(|t| t.id.clone()).collect();
        Parser {
            lex,
            gpu_re,
            gpu_by_alias,
            model_re,
            model_by_alias,
            triggers,
            trigger_topic,
            topic_ids,
        }
    }

    pub fn lexicon(&self) -> &Lexicon {
        &self.lex
    }

    /// Parses one question.
    pub fn parse(&self, raw: &str, usd_cny: f64) -> Parsed {
        let mut cut = raw.len().min(MAX_QUESTION_BYTES);
        while !raw.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = normalize(&raw[..cut]);
        let mut p = Parsed {
            empty: text.is_empty(),
            ..Parsed::default()
        };
        p.lang = detect_lang(&text);
        if p.empty {
            return p;
        }
        let lex = &self.lex;
        p.question = text
            .trim_end_matches(['.', '。', '!', '！', ' '])
            .ends_with(['?', '？', '吗', '呢', '么']);
        let scan = lex.scan(&text);
        for &cue in Cue::ALL {
            if lex.has_in(&scan, cue) {
                p.cues.push(cue);
            }
        }
        let a = &mut p.asked;

        // Cards, with a count written next to them. Their names are blanked out of the
        // text the model size is read from ("910B" is a card, not 910B parameters).
        let mut blanked = text.clone();
        for m in self.gpu_re.find_iter(&text) {
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
                .find_map(|&s| lex.find_in(&scan, s, &text, false))
                .map(|f| f.value)
                .filter(|c| *c >= 1.0 && *c <= 64.0)
                .map(|c| c as u32);
        }

        // The model: the longest catalog alias, else a bare size.
        let squeezed = normalize_alias(&text);
        if let Some(re) = &self.model_re {
            for m in re.find_iter(&squeezed) {
                let after = squeezed[m.end()..].chars().next();
                if after.is_some_and(|c| c.is_ascii_digit()) {
                    continue;
                }
                a.model = self.model_by_alias.get(m.as_str()).cloned();
                break;
            }
        }
        let tokens_b = lex.find_in(&scan, Slot::TrainTokensBillion, &text, false);
        let size_text = match lex.find(Slot::TrainTokensBillion, &blanked) {
            Some(f) => format!("{}{}", &blanked[..f.start], &blanked[f.end..]),
            None => blanked,
        };
        if a.model.is_none() {
            // "70B" is in billions; "七百亿参数" counts parameters (a count under a million
            // is read as billions: "70 参数的模型").
            let billions = lex.find(Slot::Size, &size_text);
            let count = || {
                lex.find(Slot::SizeCount, &size_text).map(|f| {
                    if f.value >= 1e6 {
                        super::lexicon::Found {
                            value: f.value / 1e9,
                            ..f
                        }
                    } else {
                        f
                    }
                })
            };
            if let Some(f) = billions.or_else(count) {
                let b = f.value;
                let negative = matches!(f.before, Some('-' | '负'))
                    && size_text[..f.start]
                        .chars()
                        .rev()
                        .nth(1)
                        .is_none_or(|c| !c.is_alphanumeric());
                if negative {
                    p.invalid = Some(Invalid::NegativeSize(b));
                } else if b > MAX_PARAMS_B {
                    p.invalid = Some(Invalid::HugeSize(b));
                } else if b > 0.0 {
                    a.size_b = Some(b);
                }
            }
        }

        // Task and precision.
        a.task = [
            (Slot::TaskQlora, Task::Qlora),
            (Slot::TaskPretrain, Task::Pretrain),
            (Slot::TaskFull, Task::Full),
            (Slot::TaskLora, Task::Lora),
            (Slot::TaskTrain, Task::Lora),
        ]
        .iter()
        .find(|&&(s, _)| lex.has_in(&scan, s))
        .map(|(_, t)| *t)
        .or_else(|| {
            lex.has_in(&scan, Slot::TaskInference)
                .then_some(Task::Inference)
        });
        a.image = lex.has_in(&scan, Slot::TaskImage);
        // "fp8 kv cache" and "不量化" are not weight formats: blank them out first.
        let mut prec_text = text.clone();
        let kv = lex.find_in(&scan, Slot::Kv8bit, &text, false);
        a.kv_8bit = kv.is_some();
        for f in [kv, lex.find_in(&scan, Slot::PrecisionNative, &text, false)]
            .into_iter()
            .flatten()
        {
            prec_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
        }
        let native = lex.has_in(&scan, Slot::PrecisionNative);
        a.precision = [
            (Slot::PrecisionFp32, Precision::Fp32),
            (Slot::PrecisionFp8, Precision::Fp8),
            (Slot::PrecisionInt8, Precision::Int8),
            (Slot::PrecisionInt4, Precision::Int4),
            (Slot::PrecisionFp16, Precision::Fp16),
            (Slot::PrecisionBf16, Precision::Bf16),
        ]
        .iter()
        // Blanking only removes text, so a slot the whole text did not match is skipped.
        .find(|&&(s, _)| lex.has_in(&scan, s) && lex.has(s, &prec_text))
        .map(|(_, p)| *p);

        a.awq = lex.has_in(&scan, Slot::FormatAwq);
        a.optimizer_8bit = lex.has_in(&scan, Slot::Optimizer8bit);
        a.offload = lex.has_in(&scan, Slot::OptimizerOffload);

        // Numbers.
        let num =
            |slot: Slot, k_binary: bool| lex.find_in(&scan, slot, &text, k_binary).map(|f| f.value);
        let bounded = |v: Option<f64>, name: &'static str, max: f64, p: &mut Option<Invalid>| {
            v.and_then(|v| {
                if v > max {
                    *p = Some(Invalid::HugeNumber(name, v));
                    None
                } else {
                    (v >= 1.0).then_some(v)
                }
            })
        };
        let mut invalid = p.invalid.take();
        // A number is one slot's: "4 路并发 8k 上下文" is 4 streams of 8k, so the context's
        // span is blanked out before the concurrency is read.
        let context = lex.find_in(&scan, Slot::Context, &text, true);
        let mut conc_text = text.clone();
        if let Some(f) = &context {
            conc_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
        }
        let concurrency = lex
            .find_in(&scan, Slot::Concurrency, &conc_text, false)
            .map(|f| f.value);
        a.concurrency = bounded(concurrency, "concurrency", 1e6, &mut invalid).map(|v| v as u32);
        a.context =
            bounded(context.map(|f| f.value), "context", 1e8, &mut invalid).map(|v| v as u32);
        a.micro_batch =
            bounded(num(Slot::MicroBatch, false), "batch", 1e5, &mut invalid).map(|v| v as u32);
        let tokens = tokens_b
            .map(|f| f.value * 1e9)
            .or_else(|| num(Slot::TrainTokens, false).filter(|v| *v >= 1e6));
        a.train_tokens = bounded(tokens, "tokens", 1e16, &mut invalid);
        let usd = num(Slot::BudgetUsd, false).map(|v| v * usd_cny);
        // A "budget" under ¥100 is a count ("两块"), not money.
        let budget = usd
            .or_else(|| num(Slot::BudgetAmount, false))
            .filter(|v| *v >= 100.0);
        a.budget_cny = bounded(budget, "budget", 1e9, &mut invalid);
        let months = num(Slot::Months, false)
            .or_else(|| num(Slot::MonthsHalf, false))
            .or_else(|| {
                num(Slot::Years, false)
                    .filter(|y| *y <= 10.0)
                    .map(|y| y * 12.0)
            });
        a.months = bounded(months, "months", 120.0, &mut invalid);
        p.invalid = invalid;
        a.annual = p.cues.contains(&Cue::Annual);
        a.domestic = p.cues.contains(&Cue::Domestic);
        if native && a.precision.is_some_and(|p| p.is_quantized()) {
            a.precision = None; // the model's native precision: the default
        }
        if a.task == Some(Task::Inference) && a.concurrency.is_none() {
            a.concurrency = a.micro_batch.take();
        }
        p.modifiers = a.task.is_some()
            || a.precision.is_some()
            || native
            || a.concurrency.is_some()
            || a.context.is_some()
            || a.micro_batch.is_some()
            || a.train_tokens.is_some()
            || a.budget_cny.is_some()
            || a.months.is_some()
            || a.annual
            || a.domestic
            || a.kv_8bit
            || a.optimizer_8bit
            || a.offload
            || !a.gpus.is_empty()
            || a.gpu_count.is_some();

        // Knowledge topics: the summed length of the distinct triggers found.
        let mut seen = vec![false; self.trigger_topic.len()];
        let mut score = vec![0usize; self.topic_ids.len()];
        for m in self.triggers.find_overlapping_iter(&text) {
            let pi = m.pattern().as_usize();
            if !std::mem::replace(&mut seen[pi], true) {
                score[self.trigger_topic[pi]] += text[m.start()..m.end()].chars().count();
            }
        }
        let mut scored: Vec<(usize, usize)> = score
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0)
            .collect();
        scored.sort_by_key(|(i, s)| (std::cmp::Reverse(*s), *i));
        p.topics = scored
            .into_iter()
            .map(|(i, _)| self.topic_ids[i].clone())
            .collect();
        p
    }
}

fn detect_lang(text: &str) -> Option<Lang> {
    if text
        .chars()
        .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c) || ('\u{3400}'..='\u{4dbf}').contains(&c))
    {
        Some(Lang::Zh)
    } else if text.chars().any(|c| c.is_ascii_alphabetic()) {
        Some(Lang::En)
    } else {
        None
    }
}
