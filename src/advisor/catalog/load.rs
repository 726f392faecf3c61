//! Loading the catalog, raw → validated: serde reads each file as it is, then every
//! cross-reference, range and flag is checked, and *all* problems are reported at once,
//! each with its file and key (`gpu-advisor check` runs exactly this). No IO: callers hand
//! it the text.

use super::*;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};

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
    /// Words that mean one thing to the topic router, each group's first word standing
    /// for the rest (`parse/topics.rs`).
    #[serde(default)]
    synonyms: Vec<Vec<String>>,
    topic: Vec<Topic>,
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
        let (topics, topic_synonyms) = match parse::<TopicFile>("topics.toml", src.topics, &mut p) {
            Some(f) => (Some(f.topic), f.synonyms),
            None => (None, Vec::new()),
        };
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
            topic_synonyms,
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
            if let Some(v) = g.visible_mib.filter(|_| g.memory_gb > 0.0) {
                if !(v > 0.0 && v <= g.memory_gb * 1024.0) {
                    p.push(problem(
                        "gpus.toml",
                        k("visible_mib"),
                        "must be in (0, memory_gb × 1024]",
                    ));
                }
            }
            if g.bandwidth_gbs <= 0.0 || g.fp16_tflops <= 0.0 {
                p.push(problem(
                    "gpus.toml",
                    k("bandwidth_gbs"),
                    "bandwidth and TFLOPS must be > 0",
                ));
            }
            // The pitfall rules read these flags, never card ids; they must agree with the
            // card's own specs, or a warning would be given for the wrong card.
            if !g.bf16 && !g.serving_only {
                p.push(problem(
                    "gpus.toml",
                    k("serving_only"),
                    "a card without BF16 cannot train: must be serving_only",
                ));
            }
            if g.consumer && !g.serving_only {
                p.push(problem(
                    "gpus.toml",
                    k("serving_only"),
                    "a consumer card is serving_only",
                ));
            }
            if g.training_flagship && (g.serving_only || !g.bf16 || !g.fp8() || g.link.is_empty()) {
                p.push(problem(
                    "gpus.toml",
                    k("training_flagship"),
                    "a training flagship has BF16, FP8 and a card-to-card link and is not serving_only",
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
        let mut nicknames: HashMap<String, String> = HashMap::new();
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
            if !NATIVE_PRECISIONS.contains(&m.native_precision.as_str()) {
                p.push(problem(
                    "models.toml",
                    k("native_precision"),
                    "bf16, fp16, fp8, fp32, mxfp4 or int4-experts",
                ));
            }
            if native_expert_bits(&m.native_precision).is_some() && m.expert_params_b <= 0.0 {
                p.push(problem(
                    "models.toml",
                    k("expert_params_b"),
                    "a native expert format needs the routed experts' parameters",
                ));
            }
            if m.expert_params_b > m.params_b
                || m.vision_params_b + m.text_encoder_b + m.vae_b >= m.params_b
            {
                p.push(problem(
                    "models.toml",
                    k("params_b"),
                    "experts, vision encoder, text encoders and VAE are parts of params_b",
                ));
            }
            if m.sliding_layers + m.linear_layers + m.cross_layers > m.layers {
                p.push(problem(
                    "models.toml",
                    k("sliding_layers"),
                    "sliding, linear-attention and cross-attention layers are among `layers`",
                ));
            }
            if (m.sliding_layers > 0) != (m.sliding_window > 0) {
                p.push(problem(
                    "models.toml",
                    k("sliding_window"),
                    "sliding_layers and sliding_window go together",
                ));
            }
            if m.linear_layers > 0 && (m.linear_state_mb.is_nan() || m.linear_state_mb <= 0.0) {
                p.push(problem(
                    "models.toml",
                    k("linear_state_mb"),
                    "linear-attention layers need their state size",
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
            if !m.released.is_empty() && !year_month(&m.released) {
                p.push(problem("models.toml", k("released"), "must be YYYY-MM"));
            }
            for n in &m.nicknames {
                if n.is_empty()
                    || !n
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                {
                    p.push(problem(
                        "models.toml",
                        k("nicknames"),
                        format!("{n:?} must be lowercase letters and digits"),
                    ));
                } else if let Some(prev) = nicknames.insert(n.clone(), m.id.clone()) {
                    p.push(problem(
                        "models.toml",
                        k("nicknames"),
                        format!("nickname {n:?} also names {prev}"),
                    ));
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
        for (i, group) in self.topic_synonyms.iter().enumerate() {
            for w in group {
                // One gram of the router: one or two Chinese characters, or one word.
                let han = w.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
                let word = w
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
                if w.is_empty() || !(han && w.chars().count() <= 2 || word) {
                    p.push(problem(
                        "topics.toml",
                        format!("synonyms[{i}]: {w:?}"),
                        "not one or two Chinese characters or one lowercase word",
                    ));
                }
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
        if self.billing.eur_cny.is_some_and(|r| r.is_nan() || r <= 0.0) {
            p.push(problem("billing.toml", "eur_cny", "must be > 0"));
        }
    }
}

/// "YYYY-MM" with a month 01–12.
fn year_month(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7
        && b[4] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || c.is_ascii_digit())
        && matches!(s[5..].parse::<u32>(), Ok(1..=12))
}
