//! Slots: the task, precision, sizes and numbers a question states, each read by its
//! lexicon entry. A number belongs to one slot ("4 路并发 8k 上下文" is 4 streams of 8k);
//! values out of any sensible range are refused (`Invalid`), never clamped.

use super::quantities::{Kind, Quantity};
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
        // "only ~5B params are active per token": the active size of the model talked
        // about, no model size of its own.
        let active_only = |f: &Found| {
            lex.all(Slot::SizeActive, &size_text)
                .iter()
                .any(|x| x.start <= f.start && f.start < x.end && x.value == f.value)
        };
        if let Some(f) = billions.or_else(count).filter(|f| !active_only(f)) {
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
                a.active_b = lex
                    .find(Slot::SizeActive, &size_text)
                    .map(|f| f.value)
                    .filter(|&x| x > 0.0 && x < b);
            }
        }
    }

    invalid
}

/// The task and the weight format. Returns whether "native precision" was asked for.
pub fn task_and_precision(lex: &Lexicon, scan: &Scan, text: &str, a: &mut Asked) -> bool {
    // A method the question declines ("不要 QLoRA", "不用全参") is not asked for.
    let negation = lex.has_in(scan, Slot::NegationWord);
    // "全参不行的话，LoRA 呢": a method given up on right after it is not asked for either.
    let rejected = |end: usize| lex.find(Slot::RejectedAfter, &text[end..]).is_some();
    let stated = |s: Slot| {
        lex.has_in(scan, s)
            && lex
                .all_in(scan, s, text, false)
                .iter()
                .any(|f| !(rejected(f.end) || negation && negated(lex, text, f.start)))
    };
    // "After fine-tuning X we'll serve 200 users": training words inside the model's
    // history, with a serving word, are not the task.
    let trained = lex.all_in(scan, Slot::TaskTrained, text, false);
    let history_only = |s: Slot| {
        !trained.is_empty()
            && lex.has_in(scan, Slot::TaskInference)
            && lex.all_in(scan, s, text, false).iter().all(|f| {
                trained
                    .iter()
                    .any(|t| t.start <= f.start && f.start < t.end)
            })
    };
    let methods = [
        (Slot::TaskQlora, Task::Qlora),
        (Slot::TaskPretrain, Task::Pretrain),
        (Slot::TaskFull, Task::Full),
        (Slot::TaskLora, Task::Lora),
        // "训练/train" with no other word trains the weights (DOMAIN.md §6).
        (Slot::TaskTrain, Task::Full),
    ];
    let method = methods
        .iter()
        .find(|&&(s, _)| stated(s) && !history_only(s));
    a.task = method
        .map(|(_, t)| *t)
        .filter(|&t| t != Task::Full || !serving_asked_last(lex, scan, text))
        .or_else(|| {
            lex.has_in(scan, Slot::TaskInference)
                .then_some(Task::Inference)
        });
    a.task_train_only =
        a.task == Some(Task::Full) && method.is_some_and(|&(s, _)| s == Slot::TaskTrain);
    // Only "跑"/"run" among the serving words: a task said before stays.
    a.task_run_only = a.task == Some(Task::Inference)
        && lex
            .all_in(scan, Slot::TaskInference, text, false)
            .iter()
            .all(|f| {
                lex.all_in(scan, Slot::TaskRun, text, false)
                    .iter()
                    .any(|r| r.start == f.start)
            });
    a.image = lex.has_in(scan, Slot::TaskImage);
    // "fp8 kv cache" and "不量化" are not weight formats: blank them out first.
    let mut prec_text = text.to_string();
    // Every mention: "FP8 KV cache (--kv-cache-dtype fp8)" names it twice.
    let kv = lex.all_in(scan, Slot::Kv8bit, text, false);
    a.kv_8bit = !kv.is_empty();
    for f in kv
        .into_iter()
        .chain(lex.find_in(scan, Slot::PrecisionNative, text, false))
    {
        prec_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
    }
    let native = lex.has_in(scan, Slot::PrecisionNative);
    let widths = [
        (Slot::PrecisionFp32, Precision::Fp32),
        (Slot::PrecisionFp8, Precision::Fp8),
        (Slot::PrecisionInt8, Precision::Int8),
        (Slot::PrecisionInt4, Precision::Int4),
        (Slot::PrecisionFp16, Precision::Fp16),
        (Slot::PrecisionBf16, Precision::Bf16),
    ];
    // "3090 不支持 FP8 的话，换成 INT8 呢？": the width switched to, over one named before.
    let switched = widths
        .iter()
        .find(|&&(s, _)| {
            lex.has_in(scan, s)
                && lex.all_in(scan, s, &prec_text, false).iter().any(|f| {
                    lex.find(Slot::PrecisionLead, &prec_text[..f.start])
                        .is_some()
                })
        })
        .map(|(_, p)| *p);
    a.precision = widths
        .iter()
        // "bf16 please, no quant — a 4-bit build burned us": with quantization declined, a
        // quantized format mentioned is not the one asked for.
        .filter(|(_, p)| {
            !(native && matches!(p, Precision::Int4 | Precision::Int8 | Precision::Fp8))
        })
        .find(|&&(s, _)| {
            lex.has_in(scan, s)
                && if negation {
                    lex.all_in(scan, s, &prec_text, false)
                        .iter()
                        .any(|f| !negated(lex, &prec_text, f.start))
                } else {
                    // Blanking only removes text, so a slot the whole text did not match is
                    // skipped.
                    lex.has(s, &prec_text)
                }
        })
        .map(|(_, p)| *p);
    a.precision = switched.or(a.precision);
    // "跑个 gguf 的" with no width: the 4-bit build; "F16 (GGUF)" is the width named.
    if a.precision.is_none() && !native && lex.has_in(scan, Slot::FormatGguf) {
        a.precision = Some(Precision::Int4);
    }

    a.awq = lex.has_in(scan, Slot::FormatAwq);
    a.optimizer_8bit = lex.has_in(scan, Slot::Optimizer8bit);
    // "不想用 offload", "without offload": declined, not asked for.
    a.offload = lex.has_in(scan, Slot::OptimizerOffload)
        && lex
            .find(Slot::OptimizerOffload, text)
            .is_none_or(|m| !(lex.has_in(scan, Slot::NegationWord) && negated(lex, text, m.start)));

    native
}

/// The numbers: concurrency, context, batch, data size, budget, rental period. The
/// numbers each slot read are added to `claimed` (where the number is).
#[allow(clippy::too_many_arguments)]
pub fn numbers(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    blanked: &str,
    fx: Fx,
    hours_per_month: f64,
    quantities: &[Quantity],
    claimed: &mut Vec<(usize, usize)>,
    budget_low: &mut Option<f64>,
    a: &mut Asked,
    mut invalid: Option<Invalid>,
) -> Option<Invalid> {
    // A token count per day or per second ("8 A100s get through 10T tokens a day, so
    // pretraining a 7B on 2T tokens…") is a rate: the data set is another count when the
    // question has one ("一天训 10T token…10T 数据争取一天跑完" has only the rate).
    let rates = lex.all_in(scan, Slot::TokensRate, text, false);
    let is_rate = |f: &Found| rates.iter().any(|r| r.num.0 < f.num.1 && f.num.0 < r.num.1);
    let billions = lex.all_in(scan, Slot::TrainTokensBillion, text, false);
    let counts = lex.all_in(scan, Slot::TrainTokens, text, false);
    let count = |f: &&Found| f.value >= 1e6;
    let data_b = billions.iter().find(|f| !is_rate(f));
    let data = counts.iter().filter(count).find(|f| !is_rate(f));
    let (tokens_b, tokens_count) = match (data_b, data) {
        (None, None) => (billions.first(), counts.iter().find(count)),
        (Some(b), _) => (Some(b), None),
        (None, found) => (None, found),
    };
    let (tokens_b, tokens_count) = (tokens_b.copied(), tokens_count.copied());
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
    let context = lex
        .find_in(scan, Slot::ContextTarget, text, true)
        .or_else(|| lex.find_in(scan, Slot::Context, text, true));
    // "how many 8k requests fit?": a request said by its length is the context, and its
    // number no count of requests.
    let sized = lex
        .find_in(scan, Slot::ContextRequestSize, text, true)
        .filter(|f| {
            !rate_follows(lex, text, f)
                && !quantities.iter().any(|q| {
                    q.overlaps(f.num.0, f.num.1) && matches!(q.kind(), Kind::Qps | Kind::DailyUsers)
                })
        });
    let mut conc_text = text.to_string();
    for f in [&context, &sized].into_iter().flatten() {
        conc_text.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
    }
    claimed.extend(sized.map(|f| f.num));
    let context = context.or(sized);
    // A number typed as another load ("3 requests per second" is QPS, "日活 3000 人" daily
    // users) is not a concurrency.
    let peak = lex.all_in(scan, Slot::ConcurrencyPeak, &conc_text, false);
    let loads: Vec<(bool, Found)> = peak
        .into_iter()
        .map(|f| (true, f))
        .chain(
            lex.all_in(scan, Slot::Concurrency, &conc_text, false)
                .into_iter()
                .map(|f| (false, f)),
        )
        // "10k requests per day" is a load over time, not requests at once.
        .filter(|(_, f)| !rate_follows(lex, &conc_text, f))
        // "十分之一的人同时在问", "三成同时在线" are shares of the people, not one or three
        // at once.
        .filter(|(_, f)| {
            !conc_text[..f.num.0].trim_end().ends_with("分之")
                && !conc_text[f.num.1..].trim_start().starts_with('成')
        })
        .filter(|(_, f)| {
            !quantities.iter().any(|q| {
                q.overlaps(f.num.0, f.num.1)
                    && matches!(
                        q.kind(),
                        Kind::Qps | Kind::DailyUsers | Kind::Speed | Kind::Money
                    )
            })
        })
        .collect();
    // A peak said is the load; otherwise the largest said ("when two or three colleagues
    // chat at once … so up to four people can get answers simultaneously"): the load to
    // size for, beside the one seen today.
    let concurrency = loads
        .iter()
        .find(|(peak, _)| *peak)
        .or_else(|| loads.iter().max_by(|x, y| x.1.value.total_cmp(&y.1.value)))
        .map(|(_, f)| *f);
    let concurrency_at = concurrency.map(|f| f.num);
    let concurrency = concurrency.map(|f| f.value);
    a.concurrency = bounded(concurrency, "concurrency", 1e6, &mut invalid).map(|v| v as u32);
    // "输入 2048 tokens，输出 512 tokens": the prompt's length was read as the context; the
    // context holds the reply too (the KV cache grows to prompt + reply).
    let reply = context
        .filter(|f| {
            let said = text[f.start..f.end].trim_start().to_lowercase();
            ["输入", "input", "prompt"]
                .iter()
                .any(|w| said.starts_with(w))
        })
        .and_then(|_| lex.find_in(scan, Slot::ContextOutput, text, true))
        .map_or(0.0, |f| f.value);
    a.context = bounded(
        context.map(|f| f.value + reply),
        "context",
        1e8,
        &mut invalid,
    )
    .map(|v| v as u32);
    a.micro_batch =
        bounded(num(Slot::MicroBatch, false), "batch", 1e5, &mut invalid).map(|v| v as u32);
    let epochs = lex
        .find_in(scan, Slot::Epochs, text, false)
        .filter(|f| f.value > 0.0);
    a.epochs = bounded(epochs.map(|f| f.value), "epochs", 1e4, &mut invalid);
    let tokens_found = tokens_b.or(tokens_count);
    let tokens_at = tokens_found.map(|f| f.num);
    // Samples and their length: their product, when the question gives no total.
    let samples = lex.find_in(scan, Slot::TrainSamples, text, false);
    let sample_tokens = lex.find_in(scan, Slot::SampleTokens, text, false);
    let per_sample = || Some(samples?.value * sample_tokens?.value);
    let tokens = tokens_b
        .map(|f| f.value * 1e9)
        .or_else(|| {
            tokens_found
                .filter(|f| sample_tokens.is_none_or(|s| s.num != f.num))
                .map(|f| f.value)
        })
        .or_else(per_sample);
    a.train_tokens = bounded(tokens, "tokens", 1e16, &mut invalid);
    // The spans of the whole matches keep money out of the words of these slots; the
    // numbers alone are what the slots claim.
    let mut taken: Vec<(usize, usize)> = Vec::new();
    taken.extend(context.map(|f| (f.start, f.end)));
    taken.extend(concurrency_at);
    taken.extend(tokens_at);
    claimed.extend(context.map(|f| f.num));
    claimed.extend(concurrency_at);
    claimed.extend(tokens_at);
    // A count of samples is never money or a load; their length is the data's when used.
    let length = sample_tokens.filter(|_| a.train_tokens.is_some());
    for f in samples.iter().chain(length.iter()) {
        taken.push((f.start, f.end));
        claimed.push(f.num);
    }
    if let Some(f) = epochs.filter(|_| a.epochs.is_some()) {
        taken.push((f.start, f.end));
        claimed.push(f.num);
    }
    if a.micro_batch.is_some() {
        claimed.extend(
            lex.find_in(scan, Slot::MicroBatch, text, false)
                .map(|f| f.num),
        );
    }
    // Money is read with card names blanked out: "3090 per year" is a card.
    // An amount quoted as a price ("你们要 2800") is not the budget.
    taken.extend(
        lex.all_in(scan, Slot::MoneyQuoted, text, false)
            .iter()
            .map(|f| f.num),
    );
    let money = money(lex, scan, blanked, fx, hours_per_month, quantities, &taken);
    a.budget_cny = bounded(money.map(|m| m.per_month), "budget", 1e9, &mut invalid);
    claimed.extend(money.filter(|_| a.budget_cny.is_some()).map(|m| m.num));
    *budget_low = money
        .filter(|m| m.low < 1.0)
        .and(a.budget_cny)
        .zip(money)
        .map(|(b, m)| b * m.low);
    let period_at = money.and_then(|m| m.period);
    // "一个月最多 1.5万" and "一年 12 万的预算" say the money's period, not the rental's.
    let not_period =
        |f: &Found| f.value != 1.0 || period_at.is_none_or(|(s, e)| f.end <= s || f.start >= e);
    // "包年的话一个月多少" asks the price of a month, not for a month's rental.
    let not_price =
        |f: &Found| f.value != 1.0 || lex.find(Slot::MonthsPriceAfter, &text[f.end..]).is_none();
    let num_free = |slot: Slot| {
        lex.all_in(scan, slot, text, false)
            .into_iter()
            .find(|f| not_period(f) && (slot != Slot::Months || not_price(f)))
    };
    // Weeks of rental ("项目做 6 周") in months of the billing month's hours.
    let weeks = || {
        num_free(Slot::Weeks).map(|w| Found {
            value: w.value * 7.0 * 24.0 / hours_per_month,
            ..w
        })
    };
    // Days of rental ("租 10 天") alike.
    let days = || {
        num_free(Slot::Days).map(|d| Found {
            value: d.value * 24.0 / hours_per_month,
            ..d
        })
    };
    let months = num_free(Slot::Months)
        .or_else(|| lex.find_in(scan, Slot::MonthsHalf, text, false))
        .or_else(|| lex.find_in(scan, Slot::MonthsQuarter, text, false))
        .or_else(|| lex.find_in(scan, Slot::MonthsOne, text, false))
        .or_else(|| {
            num_free(Slot::Years)
                .filter(|y| y.value <= 10.0)
                .map(|y| Found {
                    value: y.value * 12.0,
                    ..y
                })
        })
        .or_else(weeks)
        .or_else(days);
    // A budget for a year (a quarter, "for 3 months") is a rental that long, unless the
    // question gives the rental's own months.
    let budget_months = money
        .filter(|m| a.budget_cny.is_some() && m.months > 1.0)
        .map(|m| m.months);
    // A rental of days or weeks is a fraction of a month, at least a day's.
    let day = 24.0 / hours_per_month;
    a.months = match months.map(|f| f.value).or(budget_months) {
        Some(m) if m > 120.0 => {
            invalid = Some(Invalid::HugeNumber("months", m));
            None
        }
        Some(m) if m >= day * 0.99 => Some(m),
        _ => None,
    };
    claimed.extend(months.filter(|_| a.months.is_some()).map(|f| f.num));
    // "项目做 6 周，总预算 2 万": an amount for the whole rental, with no period of its own,
    // is spread over the rental's months.
    // "（不是每月）": whatever period the amount seemed to have, it is for the whole rental.
    let not_monthly = lex.has_in(scan, Slot::BudgetNotMonthly);
    let total = money.is_some_and(|m| m.period.is_none() || not_monthly)
        && a.budget_cny.is_some()
        && (lex.has_in(scan, Slot::BudgetTotal) || not_monthly);
    match months.map(|f| f.value) {
        Some(n) if total && n > 1.0 => {
            a.budget_cny = a.budget_cny.map(|b| b / n);
            *budget_low = budget_low.map(|b| b / n);
            a.total_months = Some(n);
        }
        // "60k RMB total" with the rental's length still to come: a later turn's months
        // spread it (`Asked::over`).
        None => a.budget_total = total,
        _ => {}
    }
    if let Some(m) = money.filter(|m| m.total && m.months > 1.0 && a.budget_cny.is_some()) {
        a.total_months = Some(m.months);
    }
    invalid
}

/// The numbers no slot's own pattern read, assigned by their kind to the slots still
/// empty (each number to one slot): "日活 3000 人", "每天有两千人用" (daily users), "QPS 大概
/// 2" (QPS), "30 人同时在线" (concurrency), "租三个月" (months), "首字 1 秒内", "TTFT under
/// 500ms" (latency), "每秒 30 个字" (speed).
pub fn by_kind(quantities: &[Quantity], claimed: &[(usize, usize)], a: &mut Asked) {
    let free = quantities
        .iter()
        .filter(|q| !claimed.iter().any(|&(s, e)| q.overlaps(s, e)));
    for q in free {
        let v = q.value;
        let s = &mut a.serving;
        match q.kind() {
            Kind::Concurrency if a.concurrency.is_none() && (1.0..=1e6).contains(&v) => {
                a.concurrency = Some(v as u32);
            }
            Kind::DailyUsers if s.daily_users.is_none() && (1.0..=1e10).contains(&v) => {
                s.daily_users = Some(v as u32);
            }
            Kind::Qps if s.qps.is_none() && v > 0.0 && v <= 1e7 => s.qps = Some(v),
            Kind::Latency if s.ttft_target_s.is_none() && v > 0.0 && v <= 600.0 => {
                s.ttft_target_s = Some(v);
            }
            Kind::LatencyMs if s.ttft_target_s.is_none() && v > 0.0 && v <= 600e3 => {
                s.ttft_target_s = Some(v / 1000.0);
            }
            Kind::Speed if s.speed_target.is_none() && v > 0.0 && v <= 1e5 => {
                s.speed_target = Some(v);
            }
            // A rental period, not the period of an amount ("一个月顶多 4k" is money a
            // month): one month is a rental only when no budget was read.
            Kind::Months
                if a.months.is_none()
                    && (1.0..=120.0).contains(&v)
                    && (v > 1.0 || a.budget_cny.is_none()) =>
            {
                a.months = Some(v);
            }
            _ => {}
        }
    }
}

/// Where something is in the question (byte offsets).
type Span = (usize, usize);

/// Words after a number that make it a count, not money ("3 张卡", "200 路", "7b").
const COUNT_WORDS: &[&str] = &[
    "张",
    "台",
    "卡",
    "路",
    "个",
    "人",
    "位",
    "b ",
    "tokens",
    "token",
    "并发",
    "小时",
    "天",
    "gb",
    "g ",
    "users",
    "concurrent",
    "cards",
    "gpus",
];

/// The budget in CNY a month, where its period word is, where its number is and the
/// share of it a range's lower end is (1 for one amount); the budget is: the first amount of the
/// budget patterns (dollars first) that no other slot claimed, not followed by a count
/// word, and at least ¥100 ("两块" is a count). A yearly amount (the period word nearest
/// to it, not across a comma, says per year) is divided by 12.
///
/// A range ("五六千", "3-5k 一个月", "between 2 and 3 thousand a month") is its upper
/// end; an amount with a money unit or cue that no budget pattern read (a quantity of
/// kind money, `quantities.rs`) comes after the patterns' amounts.
fn money(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    fx: Fx,
    hours_per_month: f64,
    quantities: &[Quantity],
    claimed: &[(usize, usize)],
) -> Option<Money> {
    let usd = lex.all_in(scan, Slot::BudgetUsd, text, false);
    let eur = if fx.eur_cny > 0.0 {
        lex.all_in(scan, Slot::BudgetEur, text, false)
    } else {
        Vec::new()
    };
    let cny = lex.all_in(scan, Slot::BudgetAmount, text, false);
    let typed = quantities
        .iter()
        .filter(|q| q.kind() == Kind::Money)
        .map(|q| Found {
            value: q.value,
            start: q.span.start,
            end: q.span.end,
            before: None,
            num: (q.span.start, q.span.end),
            low: q.low,
        });
    // The amount per month: the nearest period word decides (a month on a tie), none is a
    // month; "for 3 months" counts its own months (a value of at least one).
    // The 月 of "三个月" counts a rental's months: not an amount's period ("三个月的项目 总共
    // 预算9000" is ¥9,000 for the three months); "一个月 5000" is.
    let rental_months: Vec<Found> = lex
        .all_in(scan, Slot::Months, text, false)
        .into_iter()
        .filter(|m| m.value > 1.0)
        .collect();
    let monthly = |f: &Found, rate: f64| -> (f64, Option<Span>, f64, bool) {
        let period = |slot: Slot| {
            lex.all_in(scan, slot, text, false)
                .into_iter()
                .filter(|p| {
                    slot != Slot::PeriodMonth
                        || !rental_months
                            .iter()
                            .any(|m| m.start <= p.start && p.end <= m.end)
                })
                .filter_map(|p| {
                    let (lo, hi) = if p.end <= f.start {
                        (p.end, f.start)
                    } else if p.start >= f.end {
                        (f.end, p.start)
                    } else {
                        return Some((0, p));
                    };
                    // A period word in another clause or sentence is not the amount's
                    // ("$3,000 for the semester (4 months). What can I rent per month?").
                    let gap = &text[lo..hi];
                    (!gap.contains([',', '，', '。', ';', '；', '、', '?', '？', '!', '！'])
                        && !gap.contains(". "))
                    .then(|| (gap.chars().count(), p))
                })
                .min_by_key(|(d, _)| *d)
        };
        // To the fen: 800 × 8.2 is 6560, not 6559.999….
        let value = (f.value * rate * 100.0).round() / 100.0;
        [
            (Slot::PeriodMonth, Some(1.0)),
            (Slot::PeriodQuarter, Some(3.0)),
            (Slot::PeriodYear, Some(12.0)),
            (Slot::PeriodMonths, None),
            (Slot::PeriodDay, Some(24.0 / hours_per_month)),
            (Slot::PeriodWeek, Some(7.0 * 24.0 / hours_per_month)),
            (Slot::PeriodHour, Some(1.0 / hours_per_month)),
        ]
        .into_iter()
        .filter_map(|(slot, months)| {
            period(slot).map(|(d, p)| (d, months.unwrap_or(p.value.max(1.0)), p, months.is_none()))
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .map_or((value, None, 1.0, false), |(_, months, p, total)| {
            (value / months, Some((p.start, p.end)), months, total)
        })
    };
    let found = usd
        .into_iter()
        .map(|f| (f, fx.usd_cny))
        .chain(eur.into_iter().map(|f| (f, fx.eur_cny)))
        .chain(cny.into_iter().map(|f| (f, 1.0)))
        .chain(typed.map(|f| (f, 1.0)))
        // A number typed as anything but money ("回复 400 左右" is a reply's length) is not
        // money, whatever pattern read it.
        .filter(|(f, _)| {
            !quantities.iter().any(|q| {
                q.overlaps(f.num.0, f.num.1) && !matches!(q.kind(), Kind::Money | Kind::Plain)
            })
        })
        .map(|(f, rate)| {
            // The number read inside a range is the range's upper end.
            let range = quantities
                .iter()
                .find(|q| q.low.is_some() && q.overlaps(f.num.0, f.num.1));
            match range {
                Some(q) => (
                    Found {
                        value: q.value,
                        num: (q.span.start, q.span.end),
                        end: f.end.max(q.span.end),
                        low: q.low,
                        ..f
                    },
                    rate,
                ),
                None => (f, rate),
            }
        })
        // "有一家报价 1100/月": a price seen elsewhere, not a budget.
        .filter(|(f, _)| quoted_price_before(lex, text, f.num.0).is_none())
        .filter(|(f, _)| {
            let rest = text[f.end..].trim_start();
            !claimed.iter().any(|&(s, e)| f.start < e && s < f.end)
                && !COUNT_WORDS
                    .iter()
                    .any(|w| rest.starts_with(w) || (w.ends_with(' ') && rest == w.trim_end()))
        })
        // An amount is at least ¥100 a month ("每小时 5 块钱" is ¥3,600).
        .find_map(|(f, rate)| {
            let m = monthly(&f, rate);
            (m.0 >= 100.0).then_some((f, rate, m))
        })?;
    let (f, _, (per_month, period, months, total)) = found;
    // The share of a range's upper end its lower end is ("五六千": 5/6).
    let low = f.low.map_or(1.0, |l| l / f.value);
    Some(Money {
        per_month,
        period,
        num: f.num,
        low,
        months,
        total,
    })
}

/// A budget as read: the amount per month, where its period word is, the number's span,
/// the share of it a range's lower end is, and the months the amount covers ("一年 6 万":
/// 12; a monthly amount 1).
/// The exchange rates of `catalog/billing.toml`: CNY per US dollar and per euro (0: a
/// euro amount is not read).
#[derive(Clone, Copy)]
pub struct Fx {
    pub usd_cny: f64,
    pub eur_cny: f64,
}

#[derive(Debug, Clone, Copy)]
struct Money {
    per_month: f64,
    period: Option<Span>,
    num: Span,
    low: f64,
    months: f64,
    /// The amount is a total for its months ("$3000 for 3 months"), not a rate.
    total: bool,
}

/// Whether a rate follows the number found ("10k requests per day", "3000 个请求每天"):
/// a load over time, neither requests at once nor a request's length.
pub fn rate_follows(lex: &Lexicon, text: &str, f: &Found) -> bool {
    lex.find(Slot::RateAfter, &text[f.end..]).is_some()
}

/// Whether the mention starting at `start` is declined: a negation right before it
/// ("不要 H100", "不要 4bit 的那种 QLoRA", "no H100"), within the same clause.
pub fn negated(lex: &Lexicon, text: &str, start: usize) -> bool {
    negated_since(lex, text, 0, start)
}

/// [`negated`], with the negation looked for only after `floor`: the end of the mention of
/// the same kind before this one, so the choice after a declined one is not declined with
/// it ("不用 vLLM 用 ollama", "不要 H100 用 A100").
pub fn negated_since(lex: &Lexicon, text: &str, floor: usize, start: usize) -> bool {
    let from = back(text, start, 48).max(floor.min(start));
    lex.find(Slot::Negation, &text[from..start]).is_some()
}

/// Where the words of a price quoted elsewhere begin, right before the number at `at`
/// ("有一家报价 1100/月", "they charge $2 an hour"), if they are there.
pub fn quoted_price_before(lex: &Lexicon, text: &str, at: usize) -> Option<usize> {
    let from = back(text, at, 24);
    lex.find(Slot::MoneyQuotedBefore, &text[from..at])
        .map(|f| from + f.start)
}

/// `at` moved back by up to `bytes`, onto a character boundary.
fn back(text: &str, at: usize, bytes: usize) -> usize {
    let mut from = at.saturating_sub(bytes);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    from
}

/// "每次 prompt 大概 12000 token", "around 3k tokens each": when nothing else set the
/// context (the serving slots read input and output first), a token count too small for
/// a data set, in a question that does not train, is the length of a request.
///
/// A count another slot read ("每次回答 500 token" is the output) is not.
pub fn request_tokens(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    claimed: &[(usize, usize)],
    a: &mut Asked,
) {
    if a.context.is_none() && a.task.is_none_or(|t| t == Task::Inference) {
        a.context = lex
            .all_in(scan, Slot::TrainTokens, text, true)
            .into_iter()
            .filter(|f| (256.0..1e6).contains(&f.value))
            .filter(|f| !claimed.iter().any(|&(s, e)| f.num.0 < e && s < f.num.1))
            .map(|f| f.value as u32)
            .max();
    }
}

/// Whether "train" is said only as a plain word in an earlier sentence and the last
/// sentence with a task word asks to serve: "We rent your box for training. Could it
/// host Qwen3-235B?" asks about hosting.
fn serving_asked_last(lex: &Lexicon, scan: &Scan, text: &str) -> bool {
    if !lex.has_in(scan, Slot::TaskInference)
        || [
            Slot::TaskFull,
            Slot::TaskPretrain,
            Slot::TaskLora,
            Slot::TaskQlora,
        ]
        .iter()
        .any(|&s| lex.has_in(scan, s))
    {
        return false;
    }
    let last = |slot: Slot| {
        lex.all_in(scan, slot, text, false)
            .iter()
            .map(|f| f.start)
            .max()
    };
    let (Some(train), Some(serve)) = (last(Slot::TaskTrain), last(Slot::TaskInference)) else {
        return false;
    };
    serve > train && text[train..serve].contains(['.', '。', '?', '？', '!', '！', '\n'])
}
