//! Knowledge topics in an answer: an FAQ answered whole, and the pitfalls and FAQs that
//! apply to a workload quoted in brief (DOMAIN.md §3–§5). Which pitfalls apply is read
//! from the card's flags in `gpus.toml` (`consumer`, `serving_only`, `training_flagship`)
//! and the offer's link, never from card ids, so a renamed or added card keeps its
//! warnings. Wording is `snippets`'.

use super::context::Context;
use crate::advisor::catalog::ANNUAL_MONTHS;
use crate::advisor::contract::Answer;
use crate::advisor::recommend::Candidate;
use crate::advisor::reply::t;
use crate::advisor::workload::{Precision, Task, Workload};

/// Pitfalls and FAQs that apply to this workload (DOMAIN.md §3–§5).
pub fn contextual_topics(
    ctx: &Context<'_>,
    w: &Workload,
    best: Option<&Candidate<'_>>,
    named: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<&str> = Vec::new();
    let training = w.task.is_training();
    if let Some(g) = named.and_then(|g| ctx.cat.gpu(g)) {
        // A consumer card's 24 GB cannot hold a 60B+ model even at INT4 with context.
        if g.consumer && w.arch.params_b >= 60.0 {
            out.push("pitfall-4090-70b");
        }
        if training && g.serving_only {
            out.push("pitfall-inference-card-training");
        }
        // A flagship training card to serve a model: up to 14B fits a much cheaper card.
        if g.training_flagship && !training && w.arch.params_b <= 14.0 {
            out.push("pitfall-small-model-h100");
        } else if g.training_flagship && !training {
            out.push("pitfall-h100-for-inference");
        }
        if training
            && ctx.asked.gpu_count.unwrap_or(1) > 1
            && ctx
                .cat
                .offer_for_gpu(&g.id)
                .is_some_and(|o| o.link.is_empty())
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

pub fn add_topic_snippets(ctx: &Context<'_>, ids: &[String], ans: &mut Answer, max: usize) {
    for id in ids.iter().take(max) {
        if let Some(topic) = ctx.cat.topic(id) {
            ans.rendered
                .text(ctx.snippets.get(ctx.cat, topic, ctx.lang));
            ans.topics.push(topic.id.clone());
        }
    }
}

pub fn faq(ctx: &Context<'_>, ans: &mut Answer) {
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

/// Quotes one topic in brief.
pub fn add_topic(ctx: &Context<'_>, ans: &mut Answer, id: &str) {
    if let Some(tp) = ctx.cat.topic(id) {
        ans.rendered.text(ctx.snippets.get(ctx.cat, tp, ctx.lang));
        ans.topics.push(tp.id.clone());
    }
}
