//! The pipeline: question + conversation state → answer + new state.
//!
//! `Advisor::answer` parses the question, decides the intent (laying a follow-up over the
//! previous turn), resolves the workload and composes the answer of that intent: its
//! JSON fields (`contract`) and the neutral reply in the asker's language. The modules
//! below compose one kind of answer each; they read the catalog and the estimator and
//! never parse, decide an intent or do IO.

mod architecture;
mod budget;
mod compare;
mod context;
pub mod describe;
mod fit;
mod help;
mod price;
mod recommendation;
mod serving;
mod snippets;
mod topics;
mod unknown;

pub use super::contract::{
    round1, Answer, ConfigJson, ConstraintsJson, EstimateJson, VerdictJson, WorkloadJson,
};
pub use super::intent::{
    decide, only_reply_lang, passing_topic, states_nothing, Intent, State, Turn,
};
pub use context::Context;
pub use help::invalid_text;
pub use snippets::{topic_snippet, Snippets};

use super::catalog::{normalize_alias, Catalog};
use super::lexicon::Lexicon;
use super::parse::{Lang, Parser};
use super::recommend::Limits;
use super::reply::Reply;
use super::workload::{sized_sibling, Workload};

/// The advisor: a validated catalog, the parser compiled from it and the intents, and
/// the topic snippets made from it once.
pub struct Advisor {
    pub catalog: Catalog,
    pub parser: Parser,
    snippets: Snippets,
}

impl Advisor {
    pub fn new(catalog: Catalog, lexicon: Lexicon) -> Advisor {
        let parser = Parser::new(lexicon, &catalog);
        let snippets = Snippets::new(&catalog);
        Advisor {
            catalog,
            parser,
            snippets,
        }
    }

    /// Answers one question of a conversation.
    pub fn answer(&self, question: &str, state: &State) -> (Answer, State) {
        let mut parsed = self.parser.parse(question, self.catalog.billing.usd_cny);
        // The language asked for the replies, else the one asked earlier, else the
        // question's own, unless it shows none ("INT8"): then the conversation's.
        let lang = parsed
            .reply_lang
            .or(state.lang)
            .or(state.last_lang.filter(|_| !parsed.lang_sure))
            .unwrap_or(parsed.lang());
        // "and the 80G version?" after the A100 40G: the A100 80G, as if named.
        if let (true, Some(gb), Some(prev)) = (
            parsed.asked.gpus.is_empty(),
            parsed.card_variant_gb,
            state.last.as_ref().and_then(|t| t.asked.gpu.as_deref()),
        ) {
            if let Some(id) = self.catalog.gpu_variant(prev, gb) {
                parsed.asked.gpus = vec![id.clone()];
                parsed.asked.gpu = Some(id);
                parsed.modifiers = true;
            }
        }
        // "what would you rent for Mixtral QLoRA?" in a conversation about Mixtral-8x7B:
        // the family named is that model.
        if let (Some(name), Some(prev)) = (
            parsed
                .unknown_model
                .as_deref()
                .filter(|_| parsed.family_named),
            state.last.as_ref().and_then(|t| t.asked.model.as_deref()),
        ) {
            if self
                .catalog
                .model(prev)
                .is_some_and(|m| normalize_alias(&m.family) == normalize_alias(name))
                && parsed.asked.size_b.is_none()
            {
                parsed.unknown_model = None;
                parsed.family_named = false;
            }
        }
        let (intent, mut asked, followup) = decide(&parsed, state.last.as_ref());
        if let Some(prev) = state.last.as_ref().filter(|_| followup) {
            if only_reply_lang(&parsed) {
                parsed.topics = prev.topics.clone();
            }
            // "那 14B 呢" after Qwen2.5-7B: the same family at that size, when the catalog
            // has it.
            if let (None, Some(size), Some(model)) =
                (&parsed.asked.model, parsed.asked.size_b, &prev.asked.model)
            {
                if let Some(id) = sized_sibling(&self.catalog, model, size) {
                    asked.model = Some(id);
                    asked.size_b = None;
                }
            }
        }
        let workload = Workload::resolve(&asked, &self.catalog);
        let limits = Limits {
            domestic: asked.domestic,
            gpu: None,
            count: None,
            budget: asked.budget_cny,
            months: asked.months,
            exclude: asked.declined.clone(),
            whole_cards: asked.whole_cards,
        };
        let ctx = Context {
            cat: &self.catalog,
            snippets: &self.snippets,
            lang,
            parsed: &parsed,
            asked: &asked,
            workload,
            limits,
            followup,
        };
        let mut answer = compose(&ctx, intent);
        if answer.rendered.is_blank() {
            // Every intent composes text for what `decide` gives it; should a combination
            // ever come out empty, the customer still gets the "what I can answer" reply.
            answer = compose(&ctx, Intent::Unknown);
        }
        // A load with no model is kept for the model named next.
        let keep = !matches!(intent, Intent::Unknown | Intent::Help)
            || (intent == Intent::Unknown && unknown::load_without_model(&asked));
        // A topic or price question between a workload and its follow-ups ("数据不能出境"
        // then "并发 15 就够了", "8 张 H20 显存一共多少" then "那 4 张 H20 跑 FP8 呢") keeps
        // the workload for them, with what the question stated.
        let mut kept = None;
        let stored = match state.last.as_ref() {
            // A topic asked in passing ("能开专票吗" between a quote and "年付的话呢") leaves
            // the conversation as it was, its question included.
            Some(prev)
                if intent == Intent::Faq
                    && !followup
                    && (passing_topic(&parsed, Some(prev)) || states_nothing(&parsed)) =>
            {
                kept = Some(prev.question_intent());
                prev.asked.clone()
            }
            Some(prev)
                if matches!(intent, Intent::Faq | Intent::Price)
                    && !followup
                    && !asked.has_workload()
                    && prev.asked.has_workload() =>
            {
                asked.over(&prev.asked).stored()
            }
            _ => asked.stored(),
        };
        let next = State {
            turns: state.turns.saturating_add(1),
            last: if keep {
                Some(Turn {
                    intent,
                    asked: stored,
                    topics: answer.topics.clone(),
                    kept,
                })
            } else {
                state.last.clone()
            },
            lang: parsed.reply_lang.or(state.lang),
            last_lang: Some(lang),
        };
        (answer, next)
    }
}

/// The answer of one intent.
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
        serving: None,
        rendered: Reply::new(ctx.lang),
        unknown_model: ctx.parsed.unknown_model.clone(),
    };
    ans.workload = ctx.workload.as_ref().map(WorkloadJson::from_workload);
    match (intent, &ctx.workload) {
        (Intent::Recommend, Some(w)) => recommendation::workload_answer(ctx, w, &mut ans, None),
        (Intent::Feasibility, Some(w)) => match a.gpu.as_deref().and_then(|g| ctx.cat.gpu(g)) {
            Some(g) => recommendation::workload_answer(ctx, w, &mut ans, Some(g.id.as_str())),
            None => recommendation::workload_answer(ctx, w, &mut ans, None),
        },
        (Intent::Compare, _) => compare::compare(ctx, &mut ans),
        (Intent::Budget, _) => budget::budget(ctx, &mut ans),
        // A quote for the conversation's workload with no count named: the configuration
        // that runs it, priced.
        (Intent::Price, Some(w)) if a.quote && a.gpu_count.is_none() => {
            price::quote(ctx, w, &mut ans)
        }
        (Intent::Price, _) => price::price(ctx, &mut ans),
        (Intent::Faq, _) => topics::faq(ctx, &mut ans),
        (Intent::Help, _) => help::help(ctx, &mut ans, false),
        (Intent::Unknown, None) if ctx.parsed.unknown_model.is_some() => {
            unknown::ask(ctx, &mut ans)
        }
        (Intent::Unknown, None) if unknown::load_without_model(a) => {
            unknown::ask_model(ctx, &mut ans)
        }
        _ => help::help(ctx, &mut ans, true),
    }
    if intent == Intent::Feasibility && ans.verdict.is_none() {
        ans.intent = Intent::Recommend;
    }
    // A budget stated as a range is taken at its upper end: say so.
    if let (Some(low), Some(high)) = (ctx.parsed.budget_low, a.budget_cny) {
        if matches!(
            ans.intent,
            Intent::Recommend | Intent::Feasibility | Intent::Budget
        ) {
            let (low, high) = (
                crate::advisor::reply::money(low),
                crate::advisor::reply::money(high),
            );
            ans.rendered.text(match ctx.lang {
                Lang::Zh => format!("预算按你给的区间上限算：{high}/月（区间 {low}–{high}）。"),
                Lang::En => format!(
                    "Budget taken at the upper end of your range: {high} a month (range {low}–{high})."
                ),
            });
        }
    }
    ans
}

#[cfg(test)]
mod tests;
