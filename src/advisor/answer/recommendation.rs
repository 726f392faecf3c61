//! Recommend and feasibility answers: the understood workload, its memory bill, the
//! verdict on a named card, the cheapest configuration that fits and the alternatives
//! (DOMAIN.md §6). One [`Search`] per answer serves every plan; the wording is
//! `describe`'s, the rules are `recommend`'s.

use super::context::Context;
use super::topics::{add_topic_snippets, contextual_topics};
use super::{architecture, describe, fit};
use crate::advisor::catalog::Unit;
use crate::advisor::contract::{round1, Answer, ConfigJson, EstimateJson, VerdictJson};
use crate::advisor::lexicon::Cue;
use crate::advisor::recommend::{self, Candidate, Limits, Plan, Search, TIGHT};
use crate::advisor::reply::{duration, t};
use crate::advisor::workload::{Precision, Task, Workload};

/// Recommend and feasibility: the understood workload, its memory bill, the verdict on
/// the named card, the recommendation and the alternatives.
pub fn workload_answer(ctx: &Context<'_>, w: &Workload, ans: &mut Answer, named: Option<&str>) {
    let cat = ctx.cat;
    let lang = ctx.lang;
    let a = ctx.asked;
    // A recommendation keeps to the card and count the user named while any of that
    // fits; otherwise it searches the whole catalog.
    let mut limits: Limits = ctx.limits.clone();
    if named.is_none() {
        limits.gpu = a.gpu.clone();
        limits.count = a.gpu_count;
    }
    // One search serves every plan of this answer: the bills and configurations are
    // the same, only the card and count kept to differ.
    let search = Search::new(cat, w, &limits);
    let mut plan = search.plan(&limits);
    if plan.best.is_none() && (limits.count.is_some() || limits.gpu.is_some()) {
        limits.count = None;
        limits.gpu = None;
        plan = search.plan(&limits);
    }
    let r = &mut ans.rendered;
    r.text(describe::workload_line(w, lang));
    architecture::notes(ctx, w)
        .into_iter()
        .for_each(|n| r.text(n));

    // The verdict for the named card(s).
    let mut named_fit: Option<Candidate<'_>> = None;
    if let Some(gpu_id) = named {
        let gpu = cat.gpu(gpu_id).expect("named gpu exists");
        let count = a.gpu_count.unwrap_or(1).clamp(1, 64);
        let need = search.bill(w.precision).per_card(count);
        // "A16 切片能跑…": the slice's memory, not the board's.
        let memory = cat
            .offers
            .iter()
            .find(|o| {
                o.gpu == gpu.id
                    && (ctx.parsed.cue(Cue::Slice) || a.slice)
                    && o.slice_memory_gb.is_some()
            })
            .and_then(|o| o.slice_memory_gb)
            .unwrap_or(gpu.memory_gb);
        // AWQ kernels need Turing or newer (DOMAIN.md §6): the card's `awq` flag.
        let no_awq = w.awq && w.precision == Precision::Int4 && !gpu.awq;
        // Training wants BF16, which T4 and V100S lack (DOMAIN.md §6): they are for
        // inference, whatever the memory says.
        let no_bf16 = w.task.is_training() && !gpu.bf16;
        let fits = need <= TIGHT * memory && !no_awq && !no_bf16;
        ans.verdict = Some(VerdictJson {
            gpu: gpu.id.clone(),
            count,
            fits,
            needed_gb: round1(need * count as f64),
            available_gb: round1(memory * count as f64),
        });
        r.text(fit::verdict_line(w, gpu, memory, count, need, fits, lang));
        if no_bf16 {
            r.text(format!(
                "{} {}",
                gpu.name,
                t(
                    lang,
                    "不支持 BF16（Ampere 及更新的卡才有），训练和微调不建议用它：FP16 训练容易溢出，这张卡留给推理。",
                    "has no BF16 (Ampere or newer have it), so it is not a card for training or fine-tuning: FP16 training overflows easily; keep it for inference.",
                )
            ));
        }
        if no_awq {
            r.text(format!(
                "{} {}",
                gpu.name,
                t(
                    lang,
                    "不支持 AWQ 内核（需要 Turing 及更新的架构），请改用 GPTQ 格式的 INT4。",
                    "cannot run AWQ kernels (they need Turing or newer); use a GPTQ INT4 build instead.",
                )
            ));
        }
        let own = Limits {
            gpu: Some(gpu.id.clone()),
            ..limits.clone()
        };
        let on_card = search.plan(&own);
        if !fits || on_card.stepped_down {
            if let Some(c) = on_card.best.as_ref().or(on_card.tight.as_ref()) {
                r.text(fit::named_way_out(c, w, lang));
                ans.alternatives.push(ConfigJson::from_candidate(
                    c,
                    Some(
                        t(
                            lang,
                            "在你问的卡上可行的方案",
                            "what works on the card you named",
                        )
                        .to_string(),
                    ),
                ));
            }
        } else if let Some(best) = on_card.best {
            // The cards counted, when they fit ("两台 8 卡 H100 要跑多久"): the job on
            // exactly those cards, not on the cheapest or fastest number of them.
            let counted = a.gpu_count.and_then(|n| {
                search
                    .plan(&Limits {
                        count: Some(n),
                        ..own.clone()
                    })
                    .best
                    .filter(|c| c.cards == n)
            });
            named_fit = Some(counted.unwrap_or(best));
        }
    }

    let best = super::serving::load_pick(
        ctx,
        w,
        named.is_some(),
        named_fit.or_else(|| plan.best.clone()),
    );
    // "2 张 H100" where the H100 comes only by the 8-card machine: the recommendation is
    // the machine, the model split over the cards named (DOMAIN.md §6), so its memory per
    // card and its speed are those of the named cards.
    let mut machine_note = None;
    let mut split = best.as_ref().map_or(1, |c| c.cards);
    let mut best = best;
    if let (Some(gpu_id), Some(n), Some(c)) = (named, a.gpu_count, best.as_mut()) {
        let split_gb = c.bill.per_card(n);
        if c.offer.unit == Unit::Machine
            && c.gpu.id == gpu_id
            && n < c.cards
            && split_gb * recommend::HEADROOM <= c.card_memory_gb
        {
            split = n;
            c.per_card_gb = split_gb;
            c.decode_tokens_per_s =
                crate::advisor::estimate::decode_tokens_per_s(w, &c.bill, c.precision, c.gpu, n);
            let zh = format!(
                    "{} 按整机出租（每台 {} 卡）：你说的 {} 张卡在一台整机里，模型按 {} 卡切分，下面的每卡显存和速度都按 {} 卡算；其余的卡可以再开副本。",
                    c.gpu.name, c.offer.cards_per_unit, n, n, n
                );
            let en = format!(
                    "The {} is rented by the whole machine ({} cards): the {} cards you named are part of one machine; the model is split over {} of them, and the memory per card and speed below are for {} cards; the other cards can run more replicas.",
                    c.gpu.name, c.offer.cards_per_unit, n, n, n
                );
            machine_note = Some(t(lang, &zh, &en).to_string());
        }
    }
    let mut est = EstimateJson::from_bill(
        search.bill(w.precision),
        best.as_ref().map_or(1, |c| c.cards),
        best.as_ref(),
    );
    // The training time is the named cards' when the question counts them (DOMAIN.md §6),
    // whichever configuration is recommended.
    if let (Some(gpu), Some(n)) = (named.and_then(|g| cat.gpu(g)), a.gpu_count) {
        if let Some(h) = crate::advisor::estimate::train_hours(w, gpu, n) {
            est.train_hours = Some(round1(h));
        }
    }
    r.text(describe::bill_line(&est, w, lang));
    if !w.arch.diffusion {
        let variants = crate::advisor::estimate::variants(w, w.precision);
        r.text(describe::recipe_line(w, &variants, lang));
    }
    ans.estimate = Some(est);
    let mut served = None;
    match &mut best {
        Some(c) => {
            if let Some(note) = machine_note {
                ans.rendered.text(note);
            }
            // One speed per configuration: the serving estimate's, when its figures are
            // for this configuration.
            ans.recommendation = Some(ConfigJson::from_candidate(c, None));
            served = super::serving::compute(ctx, w, ans);
            if let Some(sv) = served.as_ref().filter(|sv| sv.describes(c, split)) {
                c.decode_tokens_per_s = Some(sv.decode_tokens_per_s());
            }
            ans.rendered.text(describe::recommendation_line(
                c,
                w,
                plan.stepped_down && named.is_none(),
                cat,
                lang,
            ));
            ans.recommendation = Some(ConfigJson::from_candidate(c, None));
        }
        None => ans.rendered.text(fit::nothing_fits(w, a.budget_cny, lang)),
    }
    alternatives(ctx, &search, &plan, best.as_ref(), ans);
    match served {
        Some(sv) => super::serving::render(ctx, &sv, ans),
        None => super::serving::attach(ctx, w, ans),
    }
    // The pitfalls of a card hold for the card named and for the card kept to.
    let kept = named.or(ctx.asked.gpu.as_deref());
    let topics = contextual_topics(ctx, w, best.as_ref(), kept);
    add_topic_snippets(ctx, &topics, ans, 2);
}

fn alternatives(
    ctx: &Context<'_>,
    search: &Search<'_, '_>,
    plan: &Plan<'_>,
    best: Option<&Candidate<'_>>,
    ans: &mut Answer,
) {
    let cat = ctx.cat;
    let lang = ctx.lang;
    let w = search.workload();
    let hpm = cat.billing.hours_per_month;
    let mut lines = Vec::new();
    let best_cost = best.map(|b| b.cost(hpm));
    let push = |c: &Candidate<'_>, why: String, ans: &mut Answer, lines: &mut Vec<String>| {
        if ans.alternatives.len() >= 4 {
            return;
        }
        lines.push(describe::alternative_line(c, &why, lang));
        ans.alternatives
            .push(ConfigJson::from_candidate(c, Some(why)));
    };
    if let Some(c) = &plan.tight {
        push(c, describe::why_tight(c, w, lang), ans, &mut lines);
    }
    if let Some(c) = &plan.quote {
        push(
            c,
            t(
                lang,
                "低价在预算内，需询价确认",
                "its lower price is within budget: ask for a quote",
            )
            .into(),
            ans,
            &mut lines,
        );
    }
    if let Some(c) = &plan.fastest {
        let h = c.train_hours.unwrap_or(0.0);
        push(
            c,
            format!(
                "{}{}",
                t(lang, "最快完成：", "fastest: "),
                duration(h, lang)
            ),
            ans,
            &mut lines,
        );
    }
    // A lighter variant of the same job: INT4 serving, QLoRA instead of LoRA, LoRA
    // instead of full training; 8-bit Adam and offload when full training fits nowhere.
    let mut variants: Vec<(Workload, String)> = Vec::new();
    match w.task {
        Task::Inference if w.precision.level() < 3 => {
            let mut v = w.clone();
            v.precision = Precision::Int4;
            variants.push((
                v,
                t(
                    lang,
                    "INT4 量化：显存约为 BF16 的 1/3，质量略有损失",
                    "INT4 quantized: about a third of the BF16 memory, slight quality loss",
                )
                .into(),
            ));
        }
        Task::Lora => {
            let mut v = w.clone();
            v.task = Task::Qlora;
            v.precision = Precision::Int4;
            variants.push((
                v,
                t(
                    lang,
                    "QLoRA：4-bit 基座 + LoRA，显存大降，质量略有损失",
                    "QLoRA: 4-bit base + LoRA, far less memory, slight quality loss",
                )
                .into(),
            ));
        }
        Task::Full | Task::Pretrain => {
            if best.is_none() {
                let mut v = w.clone();
                v.optimizer_8bit = true;
                variants.push((
                    v,
                    t(
                        lang,
                        "8-bit Adam：优化器状态从 12 降到 6 字节/参数",
                        "8-bit Adam: optimizer state from 12 to 6 bytes per parameter",
                    )
                    .into(),
                ));
                let mut v = w.clone();
                v.offload = true;
                variants.push((
                    v,
                    t(
                        lang,
                        "ZeRO-Offload：优化器放到 CPU 内存，速度变慢",
                        "ZeRO-Offload: optimizer state in CPU memory, slower",
                    )
                    .into(),
                ));
            }
            if w.task == Task::Full {
                let mut v = w.clone();
                v.task = Task::Lora;
                variants.push((
                    v,
                    t(
                        lang,
                        "改用 LoRA：只训练适配器，显存约为全参的 1/4",
                        "LoRA instead: trains adapters only, about a quarter of the memory",
                    )
                    .into(),
                ));
            }
        }
        _ => {}
    }
    for (v, why) in variants {
        // Serving at INT4 is this search's lowest step-down level: the configurations
        // are those already built; a lighter training method is a search of its own.
        let p = if v.task == Task::Inference {
            search.plan_from(Precision::Int4.level(), &ctx.limits)
        } else {
            recommend::plan(cat, &v, &ctx.limits)
        };
        if let Some(c) = p.best {
            let cheaper = best_cost.is_none_or(|bc| c.cost(hpm) < bc - 1e-6);
            if cheaper {
                push(&c, why, ans, &mut lines);
            }
        }
    }
    if !lines.is_empty() {
        ans.rendered
            .text(t(lang, "**其他选择**", "**Other options**"));
        ans.rendered.bullets(lines);
    }
}
