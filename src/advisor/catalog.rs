//! The catalog: GPUs, offers, models, topics and billing settings, parsed from TOML
//! text and validated into rich types.
//!
//! Loading is two steps (raw → validated): serde reads the files as they are, then
//! `Catalog::build` checks every cross-reference and range and reports *all* problems at
//! once, each with its file and key. This module does no IO: callers hand it the text.

use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::fmt;

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
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub arch: String,
    pub memory_gb: f64,
    pub memory_type: String,
    pub bandwidth_gbs: f64,
    pub fp16_tflops: f64,
    pub bf16: bool,
    pub fp8_tflops: f64,
    pub int8_tops: f64,
    pub awq: bool,
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
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TopicKind {
    Faq,
    Pitfall,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topic {
    pub id: String,
    pub kind: TopicKind,
    pub title_zh: String,
    pub title_en: String,
    pub triggers: Vec<String>,
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
    pub hours_per_month: f64,
    pub industry_discount: Range,
    pub included_zh: Vec<String>,
    pub included_en: Vec<String>,
    #[serde(default)]
    pub cpu_server: Vec<CpuServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuFile {
    gpu: Vec<Gpu>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OfferFile {
    offer: Vec<Offer>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    model: Vec<Model>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicFile {
    topic: Vec<Topic>,
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
            ' ' | '-' | '_' | '.' | '\u{3000}' => {}
            // ASCII (most names) skips the case tables.
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

fn parse<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
    out: &mut Vec<Problem>,
) -> Option<T> {
    match toml::from_str::<T>(text) {
        Ok(v) => Some(v),
        Err(e) => {
            let key = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}")
                })
                .unwrap_or_else(|| "-".to_string());
            out.push(problem(file, key, e.message().to_string()));
            None
        }
    }
}

impl Catalog {
    /// Parses and validates the five catalog files, reporting every problem found.
    pub fn build(src: &CatalogSources<'_>) -> Result<Catalog, Vec<Problem>> {
        let mut p = Vec::new();
        let gpus = parse::<GpuFile>("gpus.toml", src.gpus, &mut p).map(|f| f.gpu);
        let offers = parse::<OfferFile>("offers.toml", src.offers, &mut p).map(|f| f.offer);
        let models = parse::<ModelFile>("models.toml", src.models, &mut p).map(|f| f.model);
        let topics = parse::<TopicFile>("topics.toml", src.topics, &mut p).map(|f| f.topic);
        let billing = parse::<Billing>("billing.toml", src.billing, &mut p);
        let (Some(gpus), Some(offers), Some(models), Some(topics), Some(billing)) =
            (gpus, offers, models, topics, billing)
        else {
            return Err(p);
        };
        let cat = Catalog {
            gpus,
            offers,
            models,
            topics,
            billing,
        };
        cat.validate(&mut p);
        if p.is_empty() {
            Ok(cat)
        } else {
            Err(p)
        }
    }

    fn validate(&self, p: &mut Vec<Problem>) {
        let mut aliases: HashMap<String, String> = HashMap::new();
        let mut ids = HashSet::new();
        for g in &self.gpus {
            let k = |f: &str| format!("gpu[{}].{f}", g.id);
            if !ids.insert(g.id.clone()) {
                p.push(problem("gpus.toml", k("id"), "duplicate id"));
            }
            if !(g.memory_gb > 0.0 && g.memory_gb <= 1024.0) {
                p.push(problem("gpus.toml", k("memory_gb"), "must be in (0, 1024]"));
            }
            if g.bandwidth_gbs <= 0.0 || g.fp16_tflops <= 0.0 {
                p.push(problem(
                    "gpus.toml",
                    k("bandwidth_gbs"),
                    "bandwidth and TFLOPS must be > 0",
                ));
            }
            for a in &g.aliases {
                if let Some(prev) = aliases
                    .insert(normalize_alias(a), g.id.clone())
                    .filter(|p| *p != g.id)
                {
                    p.push(problem(
                        "gpus.toml",
                        k("aliases"),
                        format!("alias {a:?} also names {prev}"),
                    ));
                }
            }
        }
        let mut offer_ids = HashSet::new();
        for o in &self.offers {
            let k = |f: &str| format!("offer[{}].{f}", o.id);
            if !offer_ids.insert(o.id.clone()) {
                p.push(problem("offers.toml", k("id"), "duplicate id"));
            }
            if self.gpu(&o.gpu).is_none() {
                p.push(problem(
                    "offers.toml",
                    k("gpu"),
                    format!("unknown gpu id {:?}", o.gpu),
                ));
            }
            if !(o.price.min > 0.0 && o.price.min <= o.price.max) {
                p.push(problem("offers.toml", k("price"), "needs 0 < min <= max"));
            }
            if o.counts.is_empty() || o.counts.iter().any(|c| !c.is_power_of_two() || *c > 8) {
                p.push(problem(
                    "offers.toml",
                    k("counts"),
                    "counts must be 1, 2, 4 or 8",
                ));
            }
            if !(0.0..0.9).contains(&o.annual_discount) {
                p.push(problem(
                    "offers.toml",
                    k("annual_discount"),
                    "must be in [0, 0.9)",
                ));
            }
            if (o.unit == Unit::Slice) != o.slice_memory_gb.is_some() {
                p.push(problem(
                    "offers.toml",
                    k("slice_memory_gb"),
                    "required for slices only",
                ));
            }
            if o.cards_per_unit == 0 {
                p.push(problem("offers.toml", k("cards_per_unit"), "must be >= 1"));
            }
        }
        let mut model_ids = HashSet::new();
        let mut model_aliases: HashMap<String, String> = HashMap::new();
        for m in &self.models {
            let k = |f: &str| format!("model[{}].{f}", m.id);
            if !model_ids.insert(m.id.clone()) {
                p.push(problem("models.toml", k("id"), "duplicate id"));
            }
            if !(m.params_b > 0.0 && m.params_b < 10_000.0) {
                p.push(problem(
                    "models.toml",
                    k("params_b"),
                    "must be in (0, 10000)",
                ));
            }
            if !(m.active_params_b > 0.0 && m.active_params_b <= m.params_b + 1e-9) {
                p.push(problem(
                    "models.toml",
                    k("active_params_b"),
                    "must be in (0, params_b]",
                ));
            }
            if !matches!(
                m.native_precision.as_str(),
                "bf16" | "fp16" | "fp8" | "fp32"
            ) {
                p.push(problem(
                    "models.toml",
                    k("native_precision"),
                    "bf16, fp16, fp8 or fp32",
                ));
            }
            if m.kind == ModelKind::Llm {
                if m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.kv_heads == 0 || m.vocab == 0
                {
                    p.push(problem(
                        "models.toml",
                        k("layers"),
                        "an LLM needs its architecture",
                    ));
                }
                if m.kv_form == KvForm::Mla && m.kv_latent_dim == 0 {
                    p.push(problem(
                        "models.toml",
                        k("kv_latent_dim"),
                        "MLA needs kv_latent_dim",
                    ));
                }
                if m.kv_copies == 0 {
                    p.push(problem("models.toml", k("kv_copies"), "must be >= 1"));
                }
            }
            let mut own = HashSet::new();
            for a in m.aliases.iter().chain(std::iter::once(&m.id)) {
                let n = normalize_alias(a);
                if n.is_empty() || !own.insert(n.clone()) {
                    continue;
                }
                if let Some(prev) = model_aliases.insert(n, m.id.clone()) {
                    p.push(problem(
                        "models.toml",
                        k("aliases"),
                        format!("alias {a:?} also names {prev}"),
                    ));
                }
            }
        }
        let mut topic_ids = HashSet::new();
        for t in &self.topics {
            let k = |f: &str| format!("topic[{}].{f}", t.id);
            if !TOPIC_IDS.contains(&t.id.as_str()) {
                p.push(problem(
                    "topics.toml",
                    k("id"),
                    "not a topic id of the contract",
                ));
            }
            if !topic_ids.insert(t.id.clone()) {
                p.push(problem("topics.toml", k("id"), "duplicate id"));
            }
            if t.text_zh.trim().is_empty() || t.title_zh.trim().is_empty() {
                p.push(problem("topics.toml", k("text_zh"), "missing Chinese text"));
            }
            if t.text_en.trim().is_empty() || t.title_en.trim().is_empty() {
                p.push(problem("topics.toml", k("text_en"), "missing English text"));
            }
            if t.triggers.is_empty() {
                p.push(problem(
                    "topics.toml",
                    k("triggers"),
                    "needs at least one trigger",
                ));
            }
        }
        for id in TOPIC_IDS {
            if !topic_ids.contains(*id) {
                p.push(problem("topics.toml", format!("topic[{id}]"), "missing"));
            }
        }
        if self.billing.usd_cny.is_nan() || self.billing.usd_cny <= 0.0 {
            p.push(problem("billing.toml", "usd_cny", "must be > 0"));
        }
    }

    pub fn gpu(&self, id: &str) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.id == id)
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
