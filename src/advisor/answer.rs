//! The pipeline: question + conversation state → answer + new state.
//!
//! `Advisor::answer` parses the question, lays a follow-up over the previous turn,
//! decides the intent, estimates, recommends and composes the reply. The state is a
//! plain value (serde), so adapters keep it in any store. Nothing here does IO.

use super::catalog::{Catalog, Range};
use super::compose;
use super::describe::Snippets;
use super::estimate::{Bill, CUDA_CONTEXT_GB};
use super::lexicon::Cue;
use super::lexicon::Lexicon;
use super::parse::{Invalid, Lang, Parsed, Parser};
use super::recommend::{Candidate, Limits};
use super::reply::Reply;
use super::workload::{Asked, Workload};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    Recommend,
    Feasibility,
    Compare,
    Budget,
    Price,
    Faq,
    Help,
    Unknown,
}

impl Intent {
    pub fn id(self) -> &'static str {
        match self {
            Intent::Recommend => "recommend",
            Intent::Feasibility => "feasibility",
            Intent::Compare => "compare",
            Intent::Budget => "budget",
            Intent::Price => "price",
            Intent::Faq => "faq",
            Intent::Help => "help",
            Intent::Unknown => "unknown",
        }
    }
}

/// What a conversation remembers between turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub turns: u32,
    pub last: Option<Turn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub intent: Intent,
    pub asked: Asked,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadJson {
    pub model: Option<String>,
    pub params_b: f64,
    pub active_params_b: f64,
    pub task: super::workload::Task,
    pub precision: &'static str,
    pub concurrency: u32,
    pub context_tokens: u32,
    pub micro_batch: Option<u32>,
    pub train_tokens: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConstraintsJson {
    pub budget_cny_month: Option<f64>,
    pub gpu: Option<String>,
    pub gpu_count: Option<u32>,
    pub domestic: bool,
    pub months: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EstimateJson {
    pub total_gb: f64,
    pub weights_gb: f64,
    pub kv_cache_gb: f64,
    pub activations_gb: f64,
    pub gradients_gb: f64,
    pub optimizer_gb: f64,
    pub overhead_gb: f64,
    pub train_hours: Option<f64>,
    pub decode_tokens_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerdictJson {
    pub gpu: String,
    pub count: u32,
    pub fits: bool,
    pub needed_gb: f64,
    pub available_gb: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigJson {
    pub offer: String,
    pub gpu: String,
    pub count: u32,
    pub vram_gb: f64,
    pub monthly_cny: Range,
    pub annual_monthly_cny: Range,
    pub estimated_price: bool,
    pub precision: &'static str,
    pub needed_gb: f64,
    pub per_card_gb: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The answer: CONTRACT.md §2, plus the neutral reply for adapters.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub lang: &'static str,
    pub intent: Intent,
    pub workload: Option<WorkloadJson>,
    pub constraints: ConstraintsJson,
    pub estimate: Option<EstimateJson>,
    pub verdict: Option<VerdictJson>,
    pub recommendation: Option<ConfigJson>,
    pub alternatives: Vec<ConfigJson>,
    pub compare: Option<Vec<String>>,
    pub topics: Vec<String>,
    pub reply: String,
    #[serde(skip)]
    pub rendered: Reply,
}

pub fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

impl ConfigJson {
    pub fn from_candidate(c: &Candidate<'_>, why: Option<String>) -> ConfigJson {
        ConfigJson {
            offer: c.offer.id.clone(),
            gpu: c.gpu.id.clone(),
            count: c.units,
            vram_gb: round1(c.vram_gb()),
            monthly_cny: c.monthly(),
            annual_monthly_cny: c.annual_monthly(),
            estimated_price: c.offer.estimated,
            precision: c.precision.id(),
            needed_gb: round1(c.needed_gb()),
            per_card_gb: round1(c.per_card_gb),
            why,
        }
    }
}

/// The advisor: a validated catalog and the compiled parser.
pub struct Advisor {
    pub catalog: Catalog,
    pub parser: Parser,
    snippets: Snippets,
}

/// Everything one turn works from, handed to the reply composer.
pub struct Context<'a> {
    pub cat: &'a Catalog,
    pub snippets: &'a Snippets,
    pub lang: Lang,
    pub parsed: &'a Parsed,
    pub asked: &'a Asked,
    pub workload: Option<Workload>,
    pub limits: Limits,
    pub followup: bool,
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
        let parsed = self.parser.parse(question, self.catalog.billing.usd_cny);
        let lang = parsed.lang();
        let (intent, asked, followup) = decide(&parsed, state.last.as_ref());
        let workload = Workload::resolve(&asked, &self.catalog);
        let limits = Limits {
            domestic: asked.domestic,
            gpu: None,
            count: None,
            budget: asked.budget_cny,
            months: asked.months,
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
        let mut answer = compose::compose(&ctx, intent);
        answer.reply = answer.rendered.markdown();
        if answer.reply.trim().is_empty() {
            // Every intent composes text for what `decide` gives it; should a combination
            // ever come out empty, the customer still gets the "what I can answer" reply.
            answer = compose::compose(&ctx, Intent::Unknown);
            answer.reply = answer.rendered.markdown();
        }
        let keep = !matches!(intent, Intent::Unknown | Intent::Help);
        let next = State {
            turns: state.turns.saturating_add(1),
            last: if keep {
                Some(Turn { intent, asked })
            } else {
                state.last.clone()
            },
        };
        (answer, next)
    }
}

/// Decides the intent, and for a follow-up lays this turn over the previous one.
pub fn decide(p: &Parsed, prev: Option<&Turn>) -> (Intent, Asked, bool) {
    let a = &p.asked;
    if p.empty || p.invalid.is_some() {
        let intent = if p.invalid.is_some() {
            Intent::Unknown
        } else {
            Intent::Help
        };
        return (intent, a.clone(), false);
    }
    if p.cue(Cue::Help) {
        return (Intent::Help, a.clone(), false);
    }
    let has_workload = a.has_workload();
    let compare = a.gpus.len() >= 2 && p.cue(Cue::Compare) && !has_workload;
    // A follow-up: something that modifies the last turn, without a workload of its own
    // or introduced as one ("那 7B 呢"). Topic-only questions and comparisons stand alone.
    if let Some(prev) = prev {
        let faq_only = !p.topics.is_empty() && !p.modifiers;
        // "H100 多少钱" after a workload is a new price question, not "that workload on H100".
        let standalone =
            !p.cue(Cue::Followup) && p.cue(Cue::Price) && !a.gpus.is_empty() && !has_workload;
        let modifies = (p.modifiers && !has_workload) || (has_workload && p.cue(Cue::Followup));
        let merged = a.over(&prev.asked);
        // An FAQ answer has nothing that "INT4 呢" could modify: the question stands alone.
        let nothing_to_modify = prev.intent == Intent::Faq && !merged.has_workload();
        if modifies && !compare && !faq_only && !standalone && !nothing_to_modify {
            let intent = match prev.intent {
                Intent::Price | Intent::Compare if !has_workload && !merged.has_workload() => {
                    Intent::Price
                }
                _ if !merged.has_workload() && merged.budget_cny.is_some() => Intent::Budget,
                _ if !merged.has_workload() => prev.intent,
                _ if a.gpus.len() == 1 && !p.cue(Cue::Recommend) => Intent::Feasibility,
                _ if a.budget_cny.is_some() => Intent::Recommend,
                Intent::Feasibility | Intent::Recommend => prev.intent,
                _ => Intent::Recommend,
            };
            return (intent, merged, true);
        }
    }
    if compare {
        return (Intent::Compare, a.clone(), false);
    }
    if has_workload {
        // A named card with a can-it cue, or asked as a question without a what-to-rent
        // cue ("4090 跑 70B？"), is a feasibility question.
        let question = p.cue(Cue::Feasibility) || p.question && !p.cue(Cue::Recommend);
        let intent = if !a.gpus.is_empty() && question {
            Intent::Feasibility
        } else {
            Intent::Recommend
        };
        return (intent, a.clone(), false);
    }
    if p.cue(Cue::Offtopic) && a.gpus.is_empty() {
        return (Intent::Unknown, a.clone(), false);
    }
    if a.budget_cny.is_some() {
        return (Intent::Budget, a.clone(), false);
    }
    let offer_cue = p.cue(Cue::Slice) || p.cue(Cue::Machine) || p.cue(Cue::Hourly);
    if p.cue(Cue::Price) && (!a.gpus.is_empty() || (offer_cue && p.topics.is_empty())) {
        return (Intent::Price, a.clone(), false);
    }
    if !p.topics.is_empty() {
        return (Intent::Faq, a.clone(), false);
    }
    if a.gpus.len() >= 2 {
        return (Intent::Compare, a.clone(), false);
    }
    if p.cue(Cue::Price) || a.gpus.len() == 1 {
        return (Intent::Price, a.clone(), false);
    }
    (Intent::Unknown, a.clone(), false)
}

/// The estimate JSON of a workload's bill `b` at its own precision, with the CUDA
/// context of `cards`.
pub fn estimate_json(b: &Bill, cards: u32, best: Option<&Candidate<'_>>) -> EstimateJson {
    let overhead = CUDA_CONTEXT_GB * cards.max(1) as f64;
    let parts = [
        b.weights,
        b.kv_cache,
        b.activations(),
        b.gradients,
        b.optimizer,
        overhead,
    ]
    .map(round1);
    EstimateJson {
        total_gb: round1(parts.iter().sum()),
        weights_gb: parts[0],
        kv_cache_gb: parts[1],
        activations_gb: parts[2],
        gradients_gb: parts[3],
        optimizer_gb: parts[4],
        overhead_gb: parts[5],
        train_hours: best.and_then(|c| c.train_hours).map(round1),
        decode_tokens_per_s: best.and_then(|c| c.decode_tokens_per_s).map(round1),
    }
}

/// Why a question was refused, for the reply.
pub fn invalid_text(i: &Invalid, lang: Lang) -> String {
    match (i, lang) {
        (Invalid::NegativeSize(b), Lang::Zh) => format!("模型大小不能是负数（读到 -{b}B）。请告诉我参数量，例如「Qwen-14B 推理」或「一个 30B 的模型」。"),
        (Invalid::NegativeSize(b), Lang::En) => format!("A model size cannot be negative (read -{b}B). Tell me the parameter count, e.g. \"Qwen-14B inference\" or \"a 30B model\"."),
        (Invalid::HugeSize(b), Lang::Zh) => format!("{b:.0}B 参数远超现有任何模型（最大的公开模型约 2T 参数），请确认模型大小。"),
        (Invalid::HugeSize(b), Lang::En) => format!("{b:.0}B parameters is beyond any existing model (the largest public ones are ~2T); please check the size."),
        (Invalid::HugeNumber(what, v), Lang::Zh) => format!("{what} = {v:.0} 超出了合理范围，请确认数字。"),
        (Invalid::HugeNumber(what, v), Lang::En) => format!("{what} = {v:.0} is out of any sensible range; please check the number."),
    }
}
