//! Slots: the task, precision, sizes and numbers a question states, each read by its
//! lexicon entry. A number belongs to one slot ("4 路并发 8k 上下文" is 4 streams of 8k);
//! values out of any sensible range are refused (`Invalid`), never clamped.

use super::{Invalid, MAX_PARAMS_B};
use crate::advisor::lexicon::{Found, Lexicon, Scan, Slot};
use crate::advisor::workload::{Asked, Precision, Task};

/// The model size when no catalog model was named: "70B" in billions, or a parameter
/// count ("七百亿参数"); `blanked` is the question with card names blanked out.
pub fn size(lex: &Lexicon, blanked: String, a: &mut Asked) -> Option<Invalid> {
    let mut invalid = None;
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
                    Found {
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
                invalid = Some(Invalid::NegativeSize(b));
            } else if b > MAX_PARAMS_B {
                invalid = Some(Invalid::HugeSize(b));
            } else if b > 0.0 {
                a.size_b = Some(b);
            }
        }
    }

    invalid
}

/// The task and the weight format. Returns whether "native precision" was asked for.
pub fn task_and_precision(lex: &Lexicon, scan: &Scan, text: &str, a: &mut Asked) -> bool {
    a.task = [
        (Slot::TaskQlora, Task::Qlora),
        (Slot::TaskPretrain, Task::Pretrain),
        (Slot::TaskFull, Task::Full),
        (Slot::TaskLora, Task::Lora),
        (Slot::TaskTrain, Task::Lora),
    ]
    .iter()
    .find(|&&(s, _)| lex.has_in(scan, s))
    .map(|(_, t)| *t)
    .or_else(|| {
        lex.has_in(scan, Slot::TaskInference)
            .then_some(Task::Inference)
    });
    a.image = lex.has_in(scan, Slot::TaskImage);
    // "fp8 kv cache" and "不量化" are not weight formats: blank them out first.
    let mut prec_text = text.to_string();
    let kv = lex.find_in(scan, Slot::Kv8bit, text, false);
    a.kv_8bit = kv.is_some();
    for f in [kv, lex.find_in(scan, Slot::PrecisionNative, text, false)]
        .into_iter()
        .flatten()
    {
        prec_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
    }
    let native = lex.has_in(scan, Slot::PrecisionNative);
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
    .find(|&&(s, _)| lex.has_in(scan, s) && lex.has(s, &prec_text))
    .map(|(_, p)| *p);

    a.awq = lex.has_in(scan, Slot::FormatAwq);
    a.optimizer_8bit = lex.has_in(scan, Slot::Optimizer8bit);
    a.offload = lex.has_in(scan, Slot::OptimizerOffload);

    native
}

/// The numbers: concurrency, context, batch, data size, budget, rental period.
pub fn numbers(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    usd_cny: f64,
    a: &mut Asked,
    mut invalid: Option<Invalid>,
) -> Option<Invalid> {
    let tokens_b = lex.find_in(scan, Slot::TrainTokensBillion, text, false);
    let num = |slot: Slot, k_binary: bool| lex.find_in(scan, slot, text, k_binary).map(|f| f.value);
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
    // A number is one slot's: "4 路并发 8k 上下文" is 4 streams of 8k, so the context's
    // span is blanked out before the concurrency is read.
    let context = lex.find_in(scan, Slot::Context, text, true);
    let mut conc_text = text.to_string();
    if let Some(f) = &context {
        conc_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
    }
    let concurrency = lex
        .find_in(scan, Slot::Concurrency, &conc_text, false)
        .map(|f| f.value);
    a.concurrency = bounded(concurrency, "concurrency", 1e6, &mut invalid).map(|v| v as u32);
    a.context = bounded(context.map(|f| f.value), "context", 1e8, &mut invalid).map(|v| v as u32);
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
    invalid
}
