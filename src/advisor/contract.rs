//! The wire contract: every type serialised in the answer JSON (CONTRACT.md §2), and
//! how the pipeline's values become those fields, rounded as the contract states.
//!
//! Field names and order here *are* the JSON: adding, renaming or reordering one changes
//! what every client reads. No wording and no decisions here: the answer modules choose
//! what to put in, this module only says how it is written.

use super::catalog::{Gpu, Offer, Range};
use super::estimate::{Bill, Serving, CUDA_CONTEXT_GB};
use super::intent::Intent;
use super::recommend::Candidate;
use super::reply::Reply;
use super::workload::{Precision, Recipe, Task, Workload};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadJson {
    pub model: Option<String>,
    pub params_b: f64,
    pub active_params_b: f64,
    pub task: Task,
    pub precision: &'static str,
    pub concurrency: u32,
    pub context_tokens: u32,
    pub micro_batch: Option<u32>,
    pub train_tokens: Option<f64>,
    /// The recipe the estimate assumes: what the question said, the defaults for the rest.
    pub recipe: Recipe,
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
    /// The caching allocator's reserve above its allocated peak (reserved − allocated),
    /// a part of `total_gb` apart from `overhead_gb` (the CUDA context only).
    pub reserve_gb: f64,
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

/// CONTRACT.md §2.1: the configuration as a service.
#[derive(Debug, Clone, Serialize)]
pub struct ServingJson {
    pub engine: &'static str,
    pub gpu: String,
    pub count: u32,
    pub kv_bytes_per_token: f64,
    pub kv_capacity_tokens: f64,
    pub max_concurrency: f64,
    pub max_context_tokens: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub decode_tokens_per_s: f64,
    pub ttft_s: f64,
    pub throughput_tokens_per_s: f64,
    pub per_user_tokens_per_s: f64,
    pub concurrency: f64,
    pub replicas: u32,
}

impl ServingJson {
    /// The serving figures of `count` cards of `gpu`, rounded as CONTRACT.md §2.1 shows
    /// them: whole bytes and tokens, the concurrency bound with two decimals (vLLM prints
    /// "1.56x"), speeds with one, TTFT in whole milliseconds (a 60 ms first token is
    /// not rounded to 0.1 s).
    pub fn from_serving(s: &Serving, gpu: &str) -> ServingJson {
        ServingJson {
            engine: s.engine.id(),
            gpu: gpu.to_string(),
            count: s.cards,
            kv_bytes_per_token: s.kv_bytes_per_token.round(),
            kv_capacity_tokens: s.kv_capacity_tokens.floor(),
            max_concurrency: round2(s.max_concurrency),
            max_context_tokens: s.max_context_tokens.floor(),
            input_tokens: s.input_tokens,
            output_tokens: s.output_tokens,
            decode_tokens_per_s: round1(s.decode_tokens_per_s),
            ttft_s: round3(s.ttft_s),
            throughput_tokens_per_s: round1(s.throughput_tokens_per_s),
            per_user_tokens_per_s: round1(s.per_user_tokens_per_s),
            concurrency: round2(s.concurrency),
            replicas: s.replicas,
        }
    }
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
    /// How the configuration serves (CONTRACT.md §2.1); null for training and when no
    /// configuration is known.
    pub serving: Option<ServingJson>,
    /// The neutral reply the adapters render for their platform; the JSON carries it as
    /// the markdown `reply`, rendered only when the answer is serialised (or `reply()` is
    /// called), not for every answer.
    #[serde(rename = "reply", serialize_with = "markdown")]
    pub rendered: Reply,
    /// A model name the catalog does not know, as the question wrote it (answered as a
    /// generic size, or asked about): the misses log records it. Not part of the JSON.
    #[serde(skip)]
    pub unknown_model: Option<String>,
}

impl Answer {
    /// The reply as markdown (CONTRACT.md §2 `reply`): what the CLI, `/v1/ask` and the
    /// console show.
    pub fn reply(&self) -> String {
        self.rendered.markdown()
    }
}

fn markdown<S: serde::Serializer>(r: &Reply, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&r.markdown())
}

/// Figures in the JSON have one decimal (memory, hours, tokens/s), rounded half away from
/// zero as [`super::reply::Fixed`] prints them, so text and JSON agree.
pub fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Seconds to the millisecond.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Parameter counts have two decimals (`7.62` B).
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

impl WorkloadJson {
    /// The workload as understood, with its defaults filled in.
    pub fn from_workload(w: &Workload) -> WorkloadJson {
        // A diffusion pipeline is named and sized by its denoiser ("FLUX.1-dev, 12B",
        // "Wan2.1-T2V-1.3B"): the text encoders and the VAE are other models it loads,
        // counted in the estimate, not in the model's parameter count.
        let beside = if w.arch.diffusion {
            w.arch.layout.text_encoder_b + w.arch.layout.vae_b
        } else {
            0.0
        };
        WorkloadJson {
            model: w.model.clone(),
            params_b: round2(w.arch.params_b - beside),
            active_params_b: round2(w.arch.active_params_b - beside),
            task: w.task,
            precision: w.precision.id(),
            concurrency: w.concurrency,
            context_tokens: w.context,
            micro_batch: w.micro_batch,
            train_tokens: w.train_tokens,
            recipe: w.recipe.assumed(
                w.task.is_training(),
                matches!(w.task, Task::Lora | Task::Qlora),
                crate::advisor::estimate::LORA_RANK as u32,
            ),
        }
    }
}

impl ConfigJson {
    /// A configuration that fits a workload, with why it is offered (alternatives).
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

    /// A priced offer without a workload (price and budget answers): nothing is needed of
    /// it, and it is quoted at the 16-bit precision every card runs.
    pub fn priced(o: &Offer, gpu: &Gpu, units: u32) -> ConfigJson {
        let mem = o.slice_memory_gb.unwrap_or(gpu.memory_gb) * (units * o.cards_per_unit) as f64;
        let monthly = o.price.scale(units as f64);
        ConfigJson {
            offer: o.id.clone(),
            gpu: gpu.id.clone(),
            count: units,
            vram_gb: mem,
            monthly_cny: monthly,
            annual_monthly_cny: monthly.scale(1.0 - o.annual_discount),
            estimated_price: o.estimated,
            precision: Precision::Bf16.id(),
            needed_gb: 0.0,
            per_card_gb: 0.0,
            why: None,
        }
    }
}

impl EstimateJson {
    /// The estimate JSON of a workload's bill `b` at its own precision, with the CUDA
    /// context of `cards`.
    pub fn from_bill(b: &Bill, cards: u32, best: Option<&Candidate<'_>>) -> EstimateJson {
        let overhead = CUDA_CONTEXT_GB * cards.max(1) as f64;
        let parts = [
            b.weights,
            b.kv_cache,
            b.activations(),
            b.gradients,
            b.optimizer,
            overhead,
            b.reserve,
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
            reserve_gb: parts[6],
        }
    }
}
