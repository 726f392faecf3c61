//! Sentences on whether a workload fits: the verdict on the card the user named, what
//! works on that card instead, and what to do when nothing fits. Wording only: the
//! figures come from the estimator and the search, the decisions from `recommendation`.

use super::describe::{config_name, task_name};
use crate::advisor::catalog::Gpu;
use crate::advisor::parse::Lang;
use crate::advisor::recommend::{Candidate, HEADROOM, TIGHT};
use crate::advisor::reply::{gb, money, money_range, t};
use crate::advisor::workload::Workload;

/// The verdict on the card the user named.
pub fn verdict_line(
    w: &Workload,
    gpu: &Gpu,
    memory: f64,
    count: u32,
    need: f64,
    fits: bool,
    lang: Lang,
) -> String {
    let avail = memory * TIGHT;
    let who = if count > 1 {
        format!("{count} × {}", gpu.name)
    } else {
        gpu.name.clone()
    };
    let margin = avail - need;
    let tight = fits && need * HEADROOM > memory;
    // Enough memory, and still no: the card lacks what the workload needs (BF16 for
    // training, AWQ kernels), said on the next line.
    let unsupported = !fits && need <= avail;
    let verdict = match (fits, tight, lang) {
        (false, _, Lang::Zh) if unsupported => "**不行**（显存够，但这张卡不支持，见下）",
        (false, _, Lang::En) if unsupported => {
            "**no**: the memory would do, the card cannot (below)"
        }
        (true, false, Lang::Zh) => "**可以**",
        (true, true, Lang::Zh) => "**勉强可以（偏紧）**",
        (false, _, Lang::Zh) => "**装不下**",
        (true, false, Lang::En) => "**yes**",
        (true, true, Lang::En) => "**yes, but tight**",
        (false, _, Lang::En) => "**no, it does not fit**",
    };
    match lang {
        Lang::Zh => format!(
            "**结论**：{who} 跑 {} {}：{verdict}。每卡需要 {} GB，可用 {} GB（{}% 显存），{} {} GB。",
            task_name(w.task, lang),
            w.precision.label(),
            gb(need),
            gb(avail),
            (TIGHT * 100.0) as u32,
            if margin >= 0.0 { "余量" } else { "缺口" },
            gb(margin.abs())
        ),
        Lang::En => format!(
            "**Verdict**: {who} for {} at {}: {verdict}. Needs {} GB per card of {} GB usable ({}% of memory), {} {} GB.",
            task_name(w.task, lang),
            w.precision.label(),
            gb(need),
            gb(avail),
            (TIGHT * 100.0) as u32,
            if margin >= 0.0 { "margin" } else { "short by" },
            gb(margin.abs())
        ),
    }
}

/// What does work on the named card: more cards or lower precision.
pub fn named_way_out(c: &Candidate<'_>, w: &Workload, lang: Lang) -> String {
    let what = if c.precision.level() != w.precision.level() {
        format!(
            "{} {}",
            t(lang, "量化到", "quantize to"),
            c.precision.label()
        )
    } else {
        t(lang, "加卡", "use more cards").to_string()
    };
    match lang {
        Lang::Zh => format!(
            "**在这张卡上的办法**：{what}，{}，每卡约 {} GB，{}/月。",
            config_name(c, lang),
            gb(c.per_card_gb),
            money_range(c.monthly())
        ),
        Lang::En => format!(
            "**On that card**: {what}: {}, about {} GB per card, {}/month.",
            config_name(c, lang),
            gb(c.per_card_gb),
            money_range(c.monthly())
        ),
    }
}

pub fn nothing_fits(w: &Workload, budget: Option<f64>, lang: Lang) -> String {
    match (budget, lang) {
        // Training is not stepped down in precision (DOMAIN.md §6): the ways out are
        // the lighter methods among the alternatives, not INT4.
        (Some(b), Lang::Zh) if w.task.is_training() => format!("**推荐**：预算 {}/月内没有能装下这个训练任务的配置（训练按所问的精度估算，不自动降精度）。可以提高预算，或用下面更省显存的做法。", money(b)),
        (Some(b), Lang::En) if w.task.is_training() => format!("**Recommended**: no configuration within {}/month holds this training job (training keeps the precision asked for). Raise the budget or see the lighter options below.", money(b)),
        (Some(b), Lang::Zh) => format!("**推荐**：预算 {}/月内没有能装下的配置（已试到 INT4）。可以提高预算或选下面的方案。", money(b)),
        (Some(b), Lang::En) => format!("**Recommended**: nothing within {}/month fits, even at INT4. Raise the budget or see the options below.", money(b)),
        (None, _) if w.task.is_training() => t(
            lang,
            "**推荐**：目录里没有单套配置能装下这个训练任务。可以改用 LoRA/QLoRA、8-bit Adam 或 offload，见下方。",
            "**Recommended**: no single configuration in the catalog holds this training job. LoRA/QLoRA, 8-bit Adam or offload can: see below.",
        )
        .to_string(),
        (None, _) => t(
            lang,
            "**推荐**：即使 INT4 也没有单套配置装得下，需要多台整机组网，请联系商务。",
            "**Recommended**: nothing fits even at INT4; this needs several networked machines: ask sales.",
        )
        .to_string(),
    }
}
