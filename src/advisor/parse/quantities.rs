//! Every number of the question as a typed quantity: where it is, its value (the upper
//! end of a range: "五六千", "3-5k", "between 2 and 3 thousand") and its kind, read
//! from the unit after it and the cue words before it ("# 元", "预算 #", "# 人同时在线", "日活 #", "QPS #", "# 个月", "首字 # 秒").
//!
//! The numbers, ranges and kinds are the `quantity*` entries of
//! `intents/slots.toml`: each kind's patterns are matched against the words around the
//! number with the number itself written `#`, all kinds in one set. Slots take their
//! numbers from their own patterns first (`slots.rs`, `serving.rs`); a quantity none of
//! them claimed is then assigned by its kind, so each number ends in at most one slot.

use crate::advisor::lexicon::{Lexicon, NameSet, Scan, Slot};
use std::cell::OnceCell;
use std::ops::Range;

/// What a number counts, from its unit and the cue words next to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Tokens per second ("每秒 30 个字", "30 tok/s").
    Speed,
    /// Seconds to the first token ("首字 1 秒内").
    Latency,
    /// Milliseconds to the first token ("TTFT under 500ms").
    LatencyMs,
    Tokens,
    DailyUsers,
    Qps,
    Concurrency,
    /// Whole machines ("两台", "2 machines", "nodes").
    Machines,
    Cards,
    /// Memory in GB ("48G 的卡").
    Memory,
    /// Model parameters ("7B", "七百亿参数").
    Params,
    Months,
    Years,
    Batch,
    Money,
    /// A number with no unit or cue the tables know.
    Plain,
}

/// The kinds in the order their entries are tried: the first that matches wins. Speed
/// before tokens ("30 tokens/s"), tokens before parameters ("10B tokens"); parameters
/// early, as the digits of model names ("qwen2.5-7b") are most of the numbers.
const KINDS: &[(Slot, Kind)] = &[
    (Slot::QuantitySpeed, Kind::Speed),
    (Slot::QuantityTokens, Kind::Tokens),
    (Slot::QuantityParams, Kind::Params),
    (Slot::QuantityLatencyMs, Kind::LatencyMs),
    (Slot::QuantityLatency, Kind::Latency),
    (Slot::QuantityDailyUsers, Kind::DailyUsers),
    (Slot::QuantityQps, Kind::Qps),
    (Slot::QuantityConcurrency, Kind::Concurrency),
    (Slot::QuantityMachines, Kind::Machines),
    (Slot::QuantityCards, Kind::Cards),
    (Slot::QuantityMemory, Kind::Memory),
    (Slot::QuantityMonths, Kind::Months),
    (Slot::QuantityYears, Kind::Years),
    (Slot::QuantityBatch, Kind::Batch),
    (Slot::QuantityMoney, Kind::Money),
];

/// Bytes of text either side of a number that its kind is read from: enough for a
/// model name between a people count and "at the same time" ("10 people, all hitting
/// Ollama with llama3.1:8b at the same time"); the patterns bound their own gaps.
const WINDOW: usize = 64;

/// One number of the question. Its kind is read when first asked for: most numbers
/// (a model's size, a count a slot's own pattern read) never need it.
pub struct Quantity<'a> {
    /// Where the number (both ends of a range) is in the normalised question.
    pub span: Range<usize>,
    /// The value; a range's upper end.
    pub value: f64,
    /// A range's lower end.
    pub low: Option<f64>,
    /// The words around the number, the number written `#`.
    context: String,
    tables: &'a Quantities,
    kind: OnceCell<Kind>,
}

impl Quantity<'_> {
    pub fn overlaps(&self, start: usize, end: usize) -> bool {
        self.span.start < end && start < self.span.end
    }

    pub fn kind(&self) -> Kind {
        *self.kind.get_or_init(|| {
            self.tables
                .kinds
                .first(&self.context)
                .map_or(Kind::Plain, |i| KINDS[i].1)
        })
    }
}

/// The kind tables, compiled once.
pub struct Quantities {
    kinds: NameSet,
}

impl Quantities {
    pub fn new(lex: &Lexicon) -> Quantities {
        let names: Vec<Slot> = KINDS.iter().map(|(s, _)| *s).collect();
        Quantities {
            kinds: lex.set(&names),
        }
    }

    /// Every number of `text` (ranges first, then single numbers that no range holds),
    /// in the order they are written. `k_binary` reads `k` as 1024 (token counts).
    pub fn read(&self, lex: &Lexicon, scan: &Scan, text: &str) -> Vec<Quantity<'_>> {
        let mut found = lex.all_in(scan, Slot::QuantityRange, text, false);
        let singles = lex.all_in(scan, Slot::Quantity, text, false);
        let singles: Vec<_> = singles
            .into_iter()
            .filter(|s| !found.iter().any(|r| r.num.0 < s.num.1 && s.num.0 < r.num.1))
            .collect();
        found.extend(singles);
        found.sort_by_key(|f| f.num.0);
        found
            .into_iter()
            .map(|f| {
                let (start, end) = f.num;
                let mut context = String::with_capacity(2 * WINDOW + 8);
                context.push_str(&text[floor(text, start.saturating_sub(WINDOW))..start]);
                context.push('#');
                context.push_str(&text[end..ceil(text, end + WINDOW)]);
                Quantity {
                    span: start..end,
                    value: f.value,
                    low: f.low,
                    context,
                    tables: self,
                    kind: OnceCell::new(),
                }
            })
            .collect()
    }
}

fn floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advisor::fixtures::lexicon;

    /// The quantities of `input`, one per word: "[<low>-]value:kind".
    fn check(input: &str, expected: &str) {
        let lex = lexicon();
        let text = lex.normalise(input);
        let scan = lex.scan(&text);
        let got: Vec<String> = Quantities::new(&lex)
            .read(&lex, &scan, &text)
            .iter()
            .map(|q| {
                let mut s = q.value.to_string();
                if let Some(l) = q.low {
                    s = format!("{l}-{s}");
                }
                format!("{s}:{:?}", q.kind()).to_lowercase()
            })
            .collect();
        assert_eq!(got.join(" "), expected, "{input:?}");
    }

    #[test]
    fn ranges_take_the_upper_end_in_one_unit() {
        check("五六千一个月", "5000-6000:money 1:months");
        check("每月 3-5k 左右", "3000-5000:money");
        check("between 2 and 3 thousand yuan a month", "2000-3000:money");
        check("一年 6 到 8 万", "1:years 60000-80000:money");
    }

    #[test]
    fn kinds_from_units_and_cues() {
        check("QPS 大概 2，每次回答 500 token", "2:qps 500:tokens");
        check("日活 3000 人", "3000:dailyusers");
        check("30 人同时在线", "30:concurrency");
        check("两台 H100", "2:machines");
        check("2 machines of A100", "2:machines");
        check("48G 的卡", "48:memory");
        check("首字 1 秒内", "1:latency");
        check("TTFT under 500ms", "500:latencyms");
        check("每秒 30 个字", "30:speed");
        check("租三个月", "3:months");
        check("预算 8000", "8000:money");
        check("三千出头", "3000:money");
        check("推理，5 个人用", "5:concurrency");
        check(
            "llama3 8b to our team of 12, sometimes all at once",
            "8:params 12:concurrency",
        );
    }
}
