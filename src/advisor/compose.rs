//! Composing answers: for each intent, the structured fields of CONTRACT.md §2 and the
//! neutral reply, in the asker's language. Every number shown comes from the catalog or
//! from the estimator.

use super::answer::{
    estimate_json, invalid_text, round1, Answer, ConfigJson, ConstraintsJson, Context, Intent,
    VerdictJson, WorkloadJson,
};
use super::catalog::ANNUAL_MONTHS;
use super::lexicon::Cue;
use super::parse::Lang;
use super::recommend::{self, Candidate, Limits, Plan, Search, TIGHT};
use super::reply::{duration, t, Reply};
use super::workload::{Precision, Task, Workload};
use super::{budget, describe, market};

pub fn compose(ctx: &Context<'_>, intent: Intent) -> Answer {
    let a = ctx.asked;
    let mut ans = Answer {
        lang: ctx.lang.id(),
        intent,
        workload: None,
        constraints: ConstraintsJson {
            budget_cny_month: a.budget_cny,
            gpu: a.gpu.clone(),
            gpu_count: a.gpu_count,
            domestic: a.domestic,
            months: a.months,
        },
        estimate: None,
        verdict: None,
        recommendation: None,
        alternatives: Vec::new(),
        compare: None,
        topics: Vec::new(),
        reply: String::new(),
        rendered: Reply::new(ctx.lang),
    };
    if let Some(w) = &ctx.workload {
        ans.workload = Some(WorkloadJson {
            model: w.model.clone(),
            params_b: round2(w.arch.params_b),
            active_params_b: round2(w.arch.active_params_b),
            task: w.task,
            precision: w.precision.id(),
            concurrency: w.concurrency,
            context_tokens: w.context,
            micro_batch: w.micro_batch,
            train_tokens: w.train_tokens,
        });
    }
    match (intent, &ctx.workload) {
        (Intent::Recommend, Some(w)) => workload_answer(ctx, w, &mut ans, None),
        (Intent::Feasibility, Some(w)) => match a.gpu.as_deref().and_then(|g| ctx.cat.gpu(g)) {
            Some(g) => workload_answer(ctx, w, &mut ans, Some(g.id.as_str())),
            None => workload_answer(ctx, w, &mut ans, None),
        },
        (Intent::Compare, _) => market::compare(ctx, &mut ans),
        (Intent::Budget, _) => budget::budget(ctx, &mut ans),
        (Intent::Price, _) => market::price(ctx, &mut ans),
        (Intent::Faq, _) => faq(ctx, &mut ans),
        (Intent::Help, _) => help(ctx, &mut ans, false),
        _ => help(ctx, &mut ans, true),
    }
    if intent == Intent::Feasibility && ans.verdict.is_none() {
        ans.intent = Intent::Recommend;
    }
    ans
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Recommend and feasibility: the understood workload, its memory bill, the verdict on
/// the named card, the recommendation and the alternatives.
fn workload_answer(ctx: &Context<'_>, w: &Workload, ans: &mut Answer, named: Option<&str>) {
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
            .find(|o| o.gpu == gpu.id && ctx.parsed.cue(Cue::Slice) && o.slice_memory_gb.is_some())
            .and_then(|o| o.slice_memory_gb)
            .unwrap_or(gpu.memory_gb);
        let fits = need <= TIGHT * memory;
        ans.verdict = Some(VerdictJson {
            gpu: gpu.id.clone(),
            count,
            fits,
            needed_gb: round1(need * count as f64),
            available_gb: round1(memory * count as f64),
        });
        r.text(describe::verdict_line(
            w, gpu, memory, count, need, fits, lang,
        ));
        let own = Limits {
            gpu: Some(gpu.id.clone()),
            ..limits.clone()
        };
        let on_card = search.plan(&own);
        if !fits || on_card.stepped_down {
            if let Some(c) = on_card.best.as_ref().or(on_card.tight.as_ref()) {
                r.text(describe::named_way_out(c, w, lang));
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
            named_fit = Some(best);
        }
    }

    let best = named_fit.or_else(|| plan.best.clone());
    let est = estimate_json(
        search.bill(w.precision),
        best.as_ref().map_or(1, |c| c.cards),
        best.as_ref(),
    );
    r.text(describe::bill_line(&est, w, lang));
    ans.estimate = Some(est);
    match &best {
        Some(c) => {
            r.text(describe::recommendation_line(
                c,
                w,
                plan.stepped_down && named.is_none(),
                cat,
                lang,
            ));
            ans.recommendation = Some(ConfigJson::from_candidate(c, None));
        }
        None => r.text(describe::nothing_fits(w, a.budget_cny, lang)),
    }
    alternatives(ctx, w, &plan, best.as_ref(), ans);
    let topics = contextual_topics(ctx, w, best.as_ref(), named);
    add_topic_snippets(ctx, &topics, ans, 2);
}

fn alternatives(
    ctx: &Context<'_>,
    w: &Workload,
    plan: &Plan<'_>,
    best: Option<&Candidate<'_>>,
    ans: &mut Answer,
) {
    let cat = ctx.cat;
    let lang = ctx.lang;
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
        let p = recommend::plan(cat, &v, &ctx.limits);
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

/// Pitfalls and FAQs that apply to this workload (DOMAIN.md §3–§5).
fn contextual_topics(
    ctx: &Context<'_>,
    w: &Workload,
    best: Option<&Candidate<'_>>,
    named: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<&str> = Vec::new();
    let consumer = |g: &str| matches!(g, "rtx3090" | "rtx4090");
    let training = w.task.is_training();
    if let Some(g) = named {
        if consumer(g) && w.arch.params_b >= 60.0 {
            out.push("pitfall-4090-70b");
        }
        if training && matches!(g, "t4" | "v100s-32g" | "rtx3090" | "rtx4090") {
            out.push("pitfall-inference-card-training");
        }
        if g == "h100-sxm" && !training && w.arch.params_b <= 14.0 {
            out.push("pitfall-small-model-h100");
        } else if g == "h100-sxm" && !training {
            out.push("pitfall-h100-for-inference");
        }
        if training
            && ctx.asked.gpu_count.unwrap_or(1) > 1
            && ctx.cat.offer_for_gpu(g).is_some_and(|o| o.link.is_empty())
        {
            out.push("pitfall-no-nvlink-multi-gpu");
        }
    }
    if ctx.asked.domestic {
        out.push("ascend");
    }
    if training && best.is_some_and(|c| c.cards > 1) {
        out.push("nvlink");
    }
    if w.precision == Precision::Fp8 {
        out.push("fp8");
    }
    if !training && (w.concurrency > 1 || w.context >= 16384) {
        out.push("concurrency");
    }
    if ctx.asked.annual || ctx.asked.months.is_some_and(|m| m >= ANNUAL_MONTHS) {
        out.push("pitfall-annual-contract");
    }
    if matches!(w.task, Task::Full | Task::Pretrain) {
        out.push("formula");
    }
    let mut ids: Vec<String> = out.into_iter().map(String::from).collect();
    for t in &ctx.parsed.topics {
        if !ids.contains(t) {
            ids.push(t.clone());
        }
    }
    ids
}

fn add_topic_snippets(ctx: &Context<'_>, ids: &[String], ans: &mut Answer, max: usize) {
    for id in ids.iter().take(max) {
        if let Some(topic) = ctx.cat.topic(id) {
            ans.rendered
                .text(ctx.snippets.get(ctx.cat, topic, ctx.lang));
            ans.topics.push(topic.id.clone());
        }
    }
}

fn faq(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let mut ids = ctx.parsed.topics.iter();
    if let Some(topic) = ids.next().and_then(|id| ctx.cat.topic(id)) {
        ans.rendered
            .title(t(lang, &topic.title_zh, &topic.title_en));
        ans.rendered
            .text(t(lang, &topic.text_zh, &topic.text_en).trim());
        ans.topics.push(topic.id.clone());
    }
    if let Some(next) = ids.next().and_then(|id| ctx.cat.topic(id)) {
        ans.rendered.text(ctx.snippets.get(ctx.cat, next, lang));
        ans.topics.push(next.id.clone());
    }
}

/// Greeting or unknown question: what the bot does and three questions to try.
pub fn help(ctx: &Context<'_>, ans: &mut Answer, unknown: bool) {
    let lang = ctx.lang;
    let r = &mut ans.rendered;
    if let Some(i) = &ctx.parsed.invalid {
        r.text(invalid_text(i, lang));
    } else if unknown {
        r.text(t(
            lang,
            "这个问题我没看懂，我只回答 GPU 租用和大模型选卡的问题。",
            "I did not catch that: I answer questions about renting GPUs for AI models.",
        ));
    } else {
        r.title(t(
            lang,
            "你好，我是 GPU 选型顾问",
            "Hi, I am the GPU rental advisor",
        ));
        r.text(t(
            lang,
            "告诉我模型、任务（推理 / LoRA / 全参 / 预训练）、精度、并发或预算，我按显存估算推荐最省钱的配置并报价。",
            "Tell me the model, the task (inference / LoRA / full fine-tune / pretraining), precision, concurrency or budget: I estimate the GPU memory and quote the cheapest configuration that fits.",
        ));
    }
    r.text(t(lang, "可以这样问：", "Try:"));
    r.bullets(match lang {
        Lang::Zh => vec![
            "微调 Qwen-14B 要什么卡?".into(),
            "4090 能跑 70B 吗".into(),
            "预算三千五能干嘛".into(),
        ],
        Lang::En => vec![
            "What GPU do I need to fine-tune Qwen-14B?".into(),
            "Can a 4090 run a 70B model?".into(),
            "What can I rent for $500 a month?".into(),
        ],
    });
}
