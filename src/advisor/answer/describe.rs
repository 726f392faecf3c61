//! Sentences about workloads and configurations, in Chinese and English. Each takes
//! its numbers from the estimator or the catalog; none decides anything (what to say is
//! chosen by the answer modules) or computes a figure of its own.

use crate::advisor::catalog::{Catalog, Offer, Unit};
use crate::advisor::contract::EstimateJson;
use crate::advisor::estimate::{Variant, TRAINING_MFU};
use crate::advisor::parse::Lang;
use crate::advisor::recommend::Candidate;
use crate::advisor::reply::{duration, gb, money_range, params, period, t};
use crate::advisor::workload::{Attention, Logits, QuantLib, Task, Workload};
use std::fmt::Write;

pub fn task_name(task: Task, lang: Lang) -> &'static str {
    match (task, lang) {
        (Task::Inference, Lang::Zh) => "推理",
        (Task::Lora, Lang::Zh) => "LoRA 微调",
        (Task::Qlora, Lang::Zh) => "QLoRA 微调",
        (Task::Full, Lang::Zh) => "全参微调",
        (Task::Pretrain, Lang::Zh) => "预训练",
        (Task::Inference, Lang::En) => "inference",
        (Task::Lora, Lang::En) => "LoRA fine-tuning",
        (Task::Qlora, Lang::En) => "QLoRA fine-tuning",
        (Task::Full, Lang::En) => "full fine-tuning",
        (Task::Pretrain, Lang::En) => "pretraining",
    }
}

fn model_label(w: &Workload, lang: Lang) -> String {
    match &w.model_name {
        Some(n) => format!("{n}（{}）", params(w.arch.params_b))
            .replace("（", t(lang, "（", " ("))
            .replace("）", t(lang, "）", ")")),
        None => format!(
            "{}{}",
            params(w.arch.params_b),
            t(
                lang,
                " 模型（通用 Llama 结构）",
                " model (generic Llama shape)"
            )
        ),
    }
}

fn tokens(n: f64) -> String {
    if n >= 1e12 {
        format!("{:.1}T", n / 1e12)
    } else if n >= 1e9 {
        format!("{:.1}B", n / 1e9)
    } else {
        format!("{:.0}M", n / 1e6)
    }
}

/// "理解的需求：Qwen-14B（14.2B），LoRA 微调，BF16，序列 2048，micro-batch 1".
pub fn workload_line(w: &Workload, lang: Lang) -> String {
    let mut parts = vec![
        model_label(w, lang),
        task_name(w.task, lang).to_string(),
        w.precision.label().to_string(),
    ];
    if w.arch.params_b > w.arch.active_params_b * 1.01 {
        parts.push(format!(
            "{}{}",
            t(lang, "MoE 每 token 激活 ", "MoE, active per token "),
            params(w.arch.active_params_b)
        ));
    }
    if w.arch.diffusion {
        parts.push(t(lang, "1024² 出图", "1024² images").into());
    } else if w.task.is_training() {
        parts.push(format!("{} {}", t(lang, "序列", "sequence"), w.context));
        parts.push(format!("micro-batch {}", w.micro_batch.unwrap_or(1)));
        match (w.train_tokens, w.epochs) {
            (Some(n), Some(e)) => parts.push(format!(
                "{} {} tokens × {e} epochs",
                t(lang, "数据", "data"),
                tokens(n / e)
            )),
            (Some(n), None) => {
                parts.push(format!("{} {} tokens", t(lang, "数据", "data"), tokens(n)));
            }
            _ => {}
        }
    } else {
        parts.push(format!("{} {}", t(lang, "上下文", "context"), w.context));
        parts.push(format!(
            "{} {}",
            t(lang, "并发", "concurrency"),
            w.concurrency
        ));
    }
    if w.kv_8bit {
        parts.push(t(lang, "8-bit KV cache", "8-bit KV cache").into());
    }
    format!(
        "{}{}",
        t(lang, "**理解的需求**：", "**Workload**: "),
        parts.join(t(lang, "，", ", "))
    )
}

/// "显存：权重 28.4 + KV 0 + 激活 7.1 + … = 36.9 GB".
pub fn bill_line(e: &EstimateJson, w: &Workload, lang: Lang) -> String {
    let mut parts = vec![format!(
        "{} {}",
        t(lang, "权重", "weights"),
        gb(e.weights_gb)
    )];
    if e.kv_cache_gb > 0.0 || !w.task.is_training() {
        parts.push(format!("KV cache {}", gb(e.kv_cache_gb)));
    }
    let mut part = |zh: &'static str, en: &'static str, v: f64| {
        parts.push(format!("{} {}", t(lang, zh, en), gb(v)));
    };
    part("激活/运行时", "activations/runtime", e.activations_gb);
    if w.task.is_training() {
        part("梯度", "gradients", e.gradients_gb);
        part("优化器", "optimizer", e.optimizer_gb);
    }
    if e.reserve_gb > 0.0 {
        part("显存池预留", "allocator reserve", e.reserve_gb);
    }
    part("CUDA 上下文", "CUDA context", e.overhead_gb);
    format!(
        "{}{} = **{} GB**",
        t(lang, "**显存估算**：", "**Memory**: "),
        parts.join(" + "),
        gb(e.total_gb)
    )
}

/// "按的做法：FlashAttention/SDPA，只算最后一个 token 的 logits；不开 FlashAttention
/// （eager）时多 4.3 GB". `variants` are the estimator's figures for the other recipes.
pub fn recipe_line(w: &Workload, variants: &[(Variant, f64)], lang: Lang) -> String {
    let r = &w.recipe;
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = r.framework {
        parts.push(f.label().to_string());
    }
    parts.push(
        match r.attention() {
            Attention::Eager => t(lang, "eager 注意力", "eager attention"),
            Attention::Sdpa => "SDPA",
            Attention::Flash => "FlashAttention/SDPA",
        }
        .to_string(),
    );
    if w.task.is_training() {
        parts.push(
            if r.checkpointing() {
                t(lang, "开梯度检查点", "gradient checkpointing on")
            } else {
                t(lang, "不开梯度检查点", "no gradient checkpointing")
            }
            .to_string(),
        );
        if matches!(w.task, Task::Lora | Task::Qlora) {
            let rank = r
                .lora_rank
                .map_or(crate::advisor::estimate::LORA_RANK as u32, |x| x);
            parts.push(format!(
                "LoRA rank {rank}{}",
                if r.lora_targets.is_none() {
                    t(lang, "（全部线性层）", " (all linear layers)")
                } else {
                    ""
                }
            ));
        }
    } else {
        parts.push(
            match r.logits() {
                Logits::Last => t(lang, "只算最后一个 token 的 logits", "last-token logits"),
                Logits::Full => t(lang, "整段 prompt 的 logits", "logits for the whole prompt"),
            }
            .to_string(),
        );
    }
    if let Some(q) = r.quant_lib {
        parts.push(
            match q {
                QuantLib::Gptq => "GPTQ",
                QuantLib::Awq => "AWQ",
                QuantLib::BnbNf4 => "bitsandbytes NF4",
                QuantLib::BnbInt8 => "bitsandbytes LLM.int8",
                QuantLib::Torchao => "torchao",
                QuantLib::Gguf => "GGUF",
            }
            .to_string(),
        );
    }
    let mut line = format!(
        "{}{}",
        t(lang, "**按的做法**：", "**Recipe assumed**: "),
        parts.join(t(lang, "，", ", "))
    );
    let shown: Vec<String> = variants
        .iter()
        .filter(|(_, d)| d.abs() >= 0.1)
        .map(|&(v, d)| {
            let what = match (v, w.task.is_training()) {
                (Variant::Eager, false) => format!(
                    "{}{}{}",
                    t(
                        lang,
                        "不开 FlashAttention（eager）时 ",
                        "with eager attention instead, "
                    ),
                    w.context,
                    t(lang, " 上下文", "-token context")
                ),
                (Variant::Eager, true) => t(
                    lang,
                    "不开 FlashAttention（eager）时",
                    "with eager attention instead",
                )
                .to_string(),
                (Variant::FullLogits, _) => t(
                    lang,
                    "算整段 prompt 的 logits 时（transformers 4.45 以前的 generate）",
                    "with logits for the whole prompt (transformers generate before 4.45)",
                )
                .to_string(),
                (Variant::NoCheckpointing, _) => {
                    t(lang, "不开梯度检查点时", "without gradient checkpointing").to_string()
                }
                (Variant::Flash, _) => t(
                    lang,
                    "换用 FlashAttention/SDPA 时",
                    "with FlashAttention/SDPA instead",
                )
                .to_string(),
                (Variant::Checkpointing, _) => {
                    t(lang, "开梯度检查点时", "with gradient checkpointing").to_string()
                }
            };
            format!(
                "{what}{}{} GB",
                if d >= 0.0 {
                    t(lang, "多 ", " adds ")
                } else {
                    t(lang, "少 ", " saves ")
                },
                gb(d.abs())
            )
        })
        .collect();
    if !shown.is_empty() {
        line.push_str(t(lang, "；", "; "));
        line.push_str(&shown.join(t(lang, "，", ", ")));
    }
    line.push_str(t(lang, "。", "."));
    line
}

pub fn config_name(c: &Candidate<'_>, lang: Lang) -> String {
    let name = t(lang, &c.offer.name_zh, &c.offer.name_en);
    match c.offer.unit {
        Unit::Card if c.units > 1 => format!("{} × {}", c.units, name),
        Unit::Machine => format!("{} × {}", c.units, name),
        _ => name.to_string(),
    }
}

/// `units` of an offer for `m` months, as the price card prices them ("3 个月共 ¥8,400",
/// "12 months: ¥26,880 (annual price)").
pub fn period_total(o: &Offer, units: u32, m: f64, lang: Lang) -> String {
    let (total, disc) = o.period_total(units, m);
    format!(
        "{}{}{}{}",
        period(m, lang),
        t(lang, "共 ", ": "),
        money_range(total),
        if disc > 0.0 {
            t(lang, "（按年付价）", " (annual price)")
        } else {
            ""
        }
    )
}

fn price_text(c: &Candidate<'_>, lang: Lang) -> String {
    let mut s = format!("{}{}", money_range(c.monthly()), t(lang, "/月", "/month"));
    if c.offer.annual_discount > 0.0 {
        let _ = write!(
            s,
            "{}{}{}",
            t(lang, "，年付 ", ", annual "),
            money_range(c.annual_monthly()),
            t(lang, "/月", "/month")
        );
    }
    if c.offer.estimated {
        s.push_str(t(
            lang,
            "（估算价，以报价为准）",
            " (estimate, ask for a quote)",
        ));
    }
    s
}

/// The recommendation with its need per card, price and speed.
pub fn recommendation_line(
    c: &Candidate<'_>,
    w: &Workload,
    stepped: bool,
    cat: &Catalog,
    lang: Lang,
) -> String {
    let mut s = format!(
        "{}{}",
        t(lang, "**推荐**：", "**Recommended**: "),
        config_name(c, lang)
    );
    if stepped {
        let _ = write!(
            s,
            "{}{}{}",
            t(lang, "，按 ", ", at "),
            c.precision.label(),
            t(
                lang,
                "（原精度没有可行配置，已降一级）",
                " (nothing fits at the requested precision, stepped down)"
            )
        );
    }
    let _ = write!(
        s,
        "{}{} / {} GB{}",
        t(lang, "，每卡需 ", ": needs "),
        gb(c.per_card_gb),
        gb(c.card_memory_gb),
        t(
            lang,
            "（满足 20% 余量）",
            " per card (within the 20 % headroom)"
        )
    );
    let _ = write!(
        s,
        "{}{}",
        t(lang, "。价格 ", ". Price "),
        price_text(c, lang)
    );
    // The rental period asked for, priced as the price card prices it.
    if let Some(m) = c.months_limit.filter(|m| *m > 0.0) {
        let _ = write!(
            s,
            "{}{}",
            t(lang, "，租 ", "; "),
            period_total(c.offer, c.units, m, lang)
        );
    }
    if let Some(h) = c.train_hours {
        let _ = write!(
            s,
            "{}{}{}{:.0}%{}",
            t(lang, "。训练时长 ", ". Training time "),
            duration(h, lang),
            t(
                lang,
                "（6 × 参数 × token，MFU ",
                " (6 × params × tokens at "
            ),
            TRAINING_MFU * 100.0,
            t(lang, "）", " MFU)")
        );
        if let Some(m) = c
            .months_limit
            .filter(|m| h / cat.billing.hours_per_month > *m)
        {
            let _ = write!(
                s,
                "{}{m:.0}{}",
                t(lang, "，超出 ", "; longer than the "),
                t(
                    lang,
                    " 个月租期，这是最快的配置",
                    "-month rental: this is the fastest configuration"
                )
            );
        }
    }
    if let Some(v) = c.decode_tokens_per_s {
        // The serving estimate's figure (answer/serving.rs), the one the serving block
        // repeats.
        let _ = write!(
            s,
            "{}{:.0} tokens/s",
            t(lang, "。单路生成约 ", ". Single-stream decode about "),
            v,
        );
    }
    if c.offer.unit == Unit::Machine && c.units > 1 {
        s.push_str(t(
            lang,
            "。多台整机需要 RDMA 互联，请与商务确认",
            ". Several machines need an RDMA network: confirm with sales",
        ));
    }
    if w.task.is_training() && c.cards > 1 {
        s.push_str(t(
            lang,
            "。多卡按 ZeRO-3 切分",
            ". Sharded with ZeRO-3 across the cards",
        ));
    } else if c.cards > 1 {
        s.push_str(t(
            lang,
            "。多卡按张量并行切分",
            ". Split with tensor parallelism",
        ));
    }
    s.push('。');
    if lang == Lang::En {
        s.pop();
        s.push('.');
    }
    s
}

pub fn alternative_line(c: &Candidate<'_>, why: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => format!(
            "{}，{}，每卡 {}/{} GB，{}/月：{}",
            config_name(c, lang),
            c.precision.label(),
            gb(c.per_card_gb),
            gb(c.card_memory_gb),
            money_range(c.monthly()),
            why
        ),
        Lang::En => format!(
            "{}, {}, {}/{} GB per card, {}/month: {}",
            config_name(c, lang),
            c.precision.label(),
            gb(c.per_card_gb),
            gb(c.card_memory_gb),
            money_range(c.monthly()),
            why
        ),
    }
}

pub fn why_tight(c: &Candidate<'_>, w: &Workload, lang: Lang) -> String {
    let limit = if w.task.is_training() {
        format!(
            "{} ≤ {}, micro-batch {}",
            t(lang, "序列", "sequence"),
            w.context,
            w.micro_batch.unwrap_or(1)
        )
    } else {
        format!(
            "{} ≤ {}, {} ≤ {}",
            t(lang, "上下文", "context"),
            w.context,
            t(lang, "并发", "concurrency"),
            w.concurrency
        )
    };
    format!(
        "{}{:.0}%{}{}",
        t(
            lang,
            "不留 20% 余量也装得下（占用 ",
            "fits without the 20 % headroom ("
        ),
        c.per_card_gb / c.card_memory_gb * 100.0,
        t(lang, "），需保持 ", " used): keep "),
        limit
    )
}
