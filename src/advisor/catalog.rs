//! The catalog: GPUs, offers, models, topics and billing settings, parsed from TOML
//! text and validated into rich types.
//!
//! Loading is two steps (raw → validated): serde reads the files as they are, then
//! `Catalog::build` checks every cross-reference and range and reports *all* problems at
//! once, each with its file and key (`load`). This module does no IO: callers hand it
//! the text. It holds the types and lookups; no rule about what to recommend lives here.

use serde::Deserialize;
use std::fmt;

pub mod import;
mod load;

/// One problem found while loading data files: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub file: String,
    pub key: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.key, self.message)
    }
}

fn problem(file: &str, key: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

/// A price per unit per month in CNY; `min == max` for a list price.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

impl Range {
    pub fn mid(&self) -> f64 {
        (self.min + self.max) / 2.0
    }
    pub fn scale(&self, k: f64) -> Range {
        Range {
            min: self.min * k,
            max: self.max * k,
        }
    }
    /// The range moved up by `v` at both ends.
    pub fn plus(&self, v: f64) -> Range {
        Range {
            min: self.min + v,
            max: self.max + v,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub arch: String,
    pub memory_gb: f64,
    /// Memory the driver exposes (nvidia-smi's total, MiB) where it falls short of the
    /// marketed size read as GiB: GDDR6 data-centre cards keep part for ECC.
    #[serde(default)]
    pub visible_mib: Option<f64>,
    pub memory_type: String,
    pub bandwidth_gbs: f64,
    pub fp16_tflops: f64,
    pub bf16: bool,
    pub fp8_tflops: f64,
    pub int8_tops: f64,
    pub awq: bool,
    /// A GeForce card (no ECC, data-centre use excluded by its licence).
    pub consumer: bool,
    /// A card to serve on, not to train on: training on it is a pitfall.
    pub serving_only: bool,
    /// The top training card: renting it only to serve a model is a pitfall.
    pub training_flagship: bool,
    pub link: String,
    pub link_gbs: f64,
    pub tdp_w: f64,
    pub source: String,
}

impl Gpu {
    pub fn fp8(&self) -> bool {
        self.fp8_tflops > 0.0
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Addon {
    /// What the add-on adds: "cpu", "ram", "disk" or "bandwidth"; a question that asks
    /// for it (the `addon.<kind>` slot of intents/slots.toml) gets it priced in.
    pub kind: String,
    pub name_zh: String,
    pub name_en: String,
    pub price: f64,
}

/// A rental this long or longer is an annual contract and gets the offer's annual
/// discount (DOMAIN.md §2: discounts are for annual payment).
pub const ANNUAL_MONTHS: f64 = 12.0;

impl Offer {
    /// `units` of the offer for `months`: the total, at the annual price from
    /// [`ANNUAL_MONTHS`] on, and the discount that was applied (0 below a year).
    pub fn period_total(&self, units: u32, months: f64) -> (Range, f64) {
        let discount = if months >= ANNUAL_MONTHS {
            self.annual_discount
        } else {
            0.0
        };
        let total = self.price.scale(units as f64 * months * (1.0 - discount));
        (total, discount)
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Card,
    Machine,
    Slice,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Offer {
    pub id: String,
    pub gpu: String,
    pub unit: Unit,
    pub cards_per_unit: u32,
    pub counts: Vec<u32>,
    #[serde(default)]
    pub slice_memory_gb: Option<f64>,
    pub price: Range,
    pub estimated: bool,
    pub link: String,
    pub inference_only: bool,
    pub domestic: bool,
    pub annual_discount: f64,
    pub hourly: bool,
    pub name_zh: String,
    pub name_en: String,
    pub notes_zh: String,
    pub notes_en: String,
    pub source: String,
    #[serde(default)]
    pub addons: Vec<Addon>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    Llm,
    Diffusion,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KvForm {
    Mha,
    Gqa,
    Mqa,
    Mla,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub id: String,
    pub name: String,
    pub family: String,
    pub kind: ModelKind,
    pub aliases: Vec<String>,
    pub params_b: f64,
    pub active_params_b: f64,
    pub layers: u32,
    pub hidden: u32,
    pub intermediate: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    pub vocab: u32,
    pub tied_embeddings: bool,
    pub native_precision: String,
    pub max_context: u32,
    pub kv_form: KvForm,
    pub kv_latent_dim: u32,
    pub kv_copies: u32,
    pub experts: u32,
    pub experts_per_token: u32,
    pub diffusion_activation_gb: f64,
    pub source: String,
    /// Month the weights were first published, "YYYY-MM"; empty when not known.
    #[serde(default)]
    pub released: String,
    /// Short names said alone ("r1", "v3", "k2"), matched only as whole words: as aliases
    /// with the separators removed they would be read inside "8k 2 张" or "yolov3".
    #[serde(default)]
    pub nicknames: Vec<String>,
    /// Layers whose attention sees at most `sliding_window` tokens (sliding-window or
    /// chunked-local attention: Gemma 2/3, gpt-oss, Llama 4); their KV is capped there.
    #[serde(default)]
    pub sliding_layers: u32,
    #[serde(default)]
    pub sliding_window: u32,
    /// Linear-attention layers (Gated DeltaNet, Mamba-style): no per-token KV, a fixed
    /// recurrent state per sequence of `linear_state_mb` (10^6 bytes, all such layers).
    #[serde(default)]
    pub linear_layers: u32,
    #[serde(default)]
    pub linear_state_mb: f64,
    /// Cross-attention layers (Llama 3.2 Vision): their K/V come from the image, not the
    /// text, a fixed `cross_state_mb` per sequence (one image at its most tiles).
    #[serde(default)]
    pub cross_layers: u32,
    #[serde(default)]
    pub cross_state_mb: f64,
    /// MoE: parameters of the routed experts (billions), the part a native expert
    /// format (MXFP4) applies to; 0 when not given.
    #[serde(default)]
    pub expert_params_b: f64,
    /// MoE: shared experts per layer (counted in `active_params_b`).
    #[serde(default)]
    pub shared_experts: u32,
    /// Vision encoder parameters (billions) of a VL model, included in `params_b`.
    #[serde(default)]
    pub vision_params_b: f64,
    /// Diffusion: text encoders and VAE parameters (billions), included in `params_b`;
    /// the rest is the denoising transformer.
    #[serde(default)]
    pub text_encoder_b: f64,
    #[serde(default)]
    pub vae_b: f64,
    /// The vendor's own documented minimum, quoted in replies (free text, with source).
    #[serde(default)]
    pub vendor_note: String,
}

/// Native precisions a model may ship in. Two are 4-bit formats of the routed experts
/// only, the rest BF16, reported as `int4`: `mxfp4` (OCP MX FP4, gpt-oss) and
/// `int4-experts` (INT4 weight-only in groups of 32 with BF16 scales, Kimi K2 Thinking).
pub const NATIVE_PRECISIONS: &[&str] = &["bf16", "fp16", "fp8", "fp32", "mxfp4", "int4-experts"];

/// Bits per routed-expert weight of a native 4-bit expert format, `None` for the others:
/// MXFP4 is 4-bit E2M1 values with one 8-bit E8M0 scale per 32 (OCP MX spec v1.0 §5),
/// 4.25 bits; INT4 in groups of 32 with a BF16 scale (compressed-tensors W4A16, group 32)
/// is 4.5 bits.
pub fn native_expert_bits(native_precision: &str) -> Option<f64> {
    match native_precision {
        "mxfp4" => Some(4.25),
        "int4-experts" => Some(4.5),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TopicKind {
    Faq,
    Pitfall,
}

/// What a topic's question is about: the cards and the workload on them (the default),
/// the service around them (the disk, the network, the contract, the data), or what it
/// costs beside the cards (how billing works, the fees). A workload stated beside a
/// question about the service or the fees is its background (`Parser::parse`).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TopicAbout {
    #[default]
    Cards,
    Service,
    Fees,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topic {
    pub id: String,
    pub kind: TopicKind,
    #[serde(default)]
    pub about: TopicAbout,
    pub title_zh: String,
    pub title_en: String,
    pub triggers: Vec<String>,
    /// Questions this topic answers, as customers write them (zh and en): the router
    /// scores a question against them (`parse/topics.rs`), so a miss is fixed by adding
    /// one.
    #[serde(default)]
    pub examples: Vec<String>,
    pub text_zh: String,
    pub text_en: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuServer {
    pub region_zh: String,
    pub region_en: String,
    pub spec: String,
    pub usd_month: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Billing {
    pub usd_cny: f64,
    /// CNY per euro, for budgets in euros; without it a euro amount is not read.
    #[serde(default)]
    pub eur_cny: Option<f64>,
    pub hours_per_month: f64,
    pub industry_discount: Range,
    pub included_zh: Vec<String>,
    pub included_en: Vec<String>,
    #[serde(default)]
    pub cpu_server: Vec<CpuServer>,
}

/// The catalog's source texts, one per file, as read from `catalog/`.
pub struct CatalogSources<'a> {
    pub gpus: &'a str,
    pub offers: &'a str,
    pub models: &'a str,
    pub topics: &'a str,
    pub billing: &'a str,
}

/// The validated catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub gpus: Vec<Gpu>,
    pub offers: Vec<Offer>,
    pub models: Vec<Model>,
    pub topics: Vec<Topic>,
    /// Groups of words the topic router reads as one (`synonyms` in topics.toml): the
    /// first word of a group stands for the others.
    pub topic_synonyms: Vec<Vec<String>>,
    pub billing: Billing,
}

/// Topic ids every catalog must carry (CONTRACT.md section 5).
pub const TOPIC_IDS: &[&str] = &[
    "vram-first",
    "formula",
    "nvlink",
    "hbm-bandwidth",
    "fp8",
    "consumer-vs-datacenter",
    "ascend",
    "billing",
    "hidden-fees",
    "slices",
    "used-cards",
    "framework",
    "concurrency",
    "training-vs-inference",
    "checklist",
    "monitoring",
    "migration",
    "upgrade-h100",
    "network",
    "storage",
    "compliance",
    "liquid-cooling",
    "multi-region",
    "pitfall-small-model-h100",
    "pitfall-4090-70b",
    "pitfall-tflops-only",
    "pitfall-used-cards",
    "pitfall-annual-contract",
    "pitfall-inference-card-training",
    "pitfall-no-nvlink-multi-gpu",
    "pitfall-h100-for-inference",
    "pitfall-one-machine-both",
    "pitfall-unit-price-only",
];

/// Normalises a name for alias matching: lowercase, without spaces, `-`, `_`, `.`.
pub fn normalize_alias(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            // ':' is Ollama's tag separator ("gemma3:27b", "qwen2.5:7b").
            ' ' | '-' | '_' | '.' | ':' | '\u{3000}' => {}
            // ASCII (most names) skips the case tables.
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

impl Catalog {
    pub fn gpu(&self, id: &str) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.id == id)
    }
    /// The card of `id`'s family (the id before its first '-': "a100" of "a100-40g") with
    /// `gb` of memory, when it is another card of the catalog.
    pub fn gpu_variant(&self, id: &str, gb: f64) -> Option<String> {
        let family = |g: &str| g.split('-').next().unwrap_or(g).to_string();
        let want = family(id);
        self.gpus
            .iter()
            .find(|g| g.id != id && family(&g.id) == want && (g.memory_gb - gb).abs() < 0.5)
            .map(|g| g.id.clone())
    }
    pub fn offer(&self, id: &str) -> Option<&Offer> {
        self.offers.iter().find(|o| o.id == id)
    }
    pub fn model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.id == id)
    }
    pub fn topic(&self, id: &str) -> Option<&Topic> {
        self.topics.iter().find(|t| t.id == id)
    }
    /// The offer a bare card name rents: the per-card offer of that GPU, else any.
    pub fn offer_for_gpu(&self, gpu: &str) -> Option<&Offer> {
        let mut best: Option<&Offer> = None;
        for o in self.offers.iter().filter(|o| o.gpu == gpu) {
            let rank = |o: &Offer| match (o.unit, o.hourly) {
                (Unit::Card, false) => 0,
                (Unit::Machine, _) => 1,
                (Unit::Card, true) => 2,
                (Unit::Slice, _) => 3,
            };
            if best.is_none_or(|b| rank(o) < rank(b)) {
                best = Some(o);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests;
