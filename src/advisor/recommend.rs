//! Recommendation: the cheapest rentable configuration that fits a workload, by the
//! rules of DOMAIN.md §6 (20 % headroom, card counts, which cards may train, FP8 only on
//! FP8 cards, domestic hardware only when asked, step-down, budgets, job cost).
//! Memory comes from `estimate`; this module chooses, it neither estimates nor words
//! anything (the answer modules do).

mod search;

use super::catalog::{Catalog, Gpu, Offer, Range, Unit};
use super::estimate::{self, Bill};
use super::workload::{Precision, Workload};
pub use search::{candidate, candidates, Bills, Search};

/// A recommendation needs `need × HEADROOM ≤ memory` (DOMAIN.md §6).
pub const HEADROOM: f64 = 1.2;
/// A feasibility verdict needs `need ≤ TIGHT × memory` (DOMAIN.md §6).
pub const TIGHT: f64 = 0.95;

/// One configuration: `units` of an offer (cards, machines or a slice) at a precision.
#[derive(Debug, Clone)]
pub struct Candidate<'c> {
    pub offer: &'c Offer,
    pub gpu: &'c Gpu,
    pub units: u32,
    pub cards: u32,
    pub precision: Precision,
    pub bill: Bill,
    pub per_card_gb: f64,
    pub card_memory_gb: f64,
    pub train_hours: Option<f64>,
    pub decode_tokens_per_s: Option<f64>,
    pub months_limit: Option<f64>,
}

impl Candidate<'_> {
    pub fn monthly(&self) -> Range {
        self.offer.price.scale(self.units as f64)
    }
    pub fn annual_monthly(&self) -> Range {
        self.monthly().scale(1.0 - self.offer.annual_discount)
    }
    pub fn vram_gb(&self) -> f64 {
        self.card_memory_gb * self.cards as f64
    }
    /// Memory the job needs on this configuration, before headroom: the estimate at this
    /// configuration's precision with a CUDA context per card.
    pub fn needed_gb(&self) -> f64 {
        self.bill.framework_total() + estimate::CUDA_CONTEXT_GB * self.cards as f64
    }
    pub fn fits_headroom(&self) -> bool {
        self.per_card_gb * HEADROOM <= self.card_memory_gb
    }
    pub fn fits_tight(&self) -> bool {
        self.per_card_gb <= TIGHT * self.card_memory_gb
    }
    pub fn job_months(&self, hours_per_month: f64) -> Option<f64> {
        self.train_hours.map(|h| h / hours_per_month)
    }
    /// The ranking cost: monthly midpoint, or the whole job's cost when the data size
    /// is known (DOMAIN.md §6).
    pub fn cost(&self, hours_per_month: f64) -> f64 {
        let m = self.monthly().mid();
        match self.job_months(hours_per_month) {
            Some(months) => m * months,
            None => m,
        }
    }
}

/// What the user imposed on the search.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub domestic: bool,
    pub gpu: Option<String>,
    pub count: Option<u32>,
    pub budget: Option<f64>,
    pub months: Option<f64>,
    /// GPU ids the user declined ("不要 H100"): never offered.
    pub exclude: Vec<String>,
    /// Slices declined: whole cards only.
    pub whole_cards: bool,
}

/// Why an offer cannot run a workload at all (not a memory question).
pub fn ineligible(
    offer: &Offer,
    gpu: &Gpu,
    cards: u32,
    w: &Workload,
    p: Precision,
) -> Option<&'static str> {
    let training = w.task.is_training();
    if training && (offer.inference_only || offer.unit == Unit::Slice) {
        return Some("inference-only");
    }
    if training && !gpu.bf16 {
        return Some("no-bf16");
    }
    if training && cards > 1 && offer.link.is_empty() {
        return Some("no-nvlink");
    }
    if p == Precision::Fp8 && !gpu.fp8() {
        return Some("no-fp8");
    }
    if w.awq && p == Precision::Int4 && !gpu.awq {
        return Some("no-awq");
    }
    if w.arch.diffusion && cards > 1 {
        return Some("single-card");
    }
    None
}

pub(super) fn card_memory(offer: &Offer, gpu: &Gpu) -> f64 {
    offer.slice_memory_gb.unwrap_or(gpu.memory_gb)
}

pub(super) fn within_budget(c: &Candidate<'_>, budget: Option<f64>) -> bool {
    budget.is_none_or(|b| c.monthly().max <= b + 1e-9)
}

/// Picks the cheapest of the fitting candidates; with a data size, the cheapest job that
/// finishes within the rental period (the fastest when none does), ties to the faster.
pub fn cheapest<'a, 'c>(
    list: &'a [Candidate<'c>],
    hours_per_month: f64,
) -> Option<&'a Candidate<'c>> {
    cheapest_of(list.iter(), hours_per_month)
}

pub(super) fn cheapest_of<'a, 'c: 'a, I>(list: I, hours_per_month: f64) -> Option<&'a Candidate<'c>>
where
    I: Iterator<Item = &'a Candidate<'c>> + Clone,
{
    let in_time = |c: &Candidate<'_>| match (c.job_months(hours_per_month), c.months_limit) {
        (Some(need), Some(limit)) => need <= limit,
        _ => true,
    };
    if !list.clone().any(in_time) {
        return fastest_of(list);
    }
    list.filter(|c| in_time(c)).min_by(|a, b| {
        let (ca, cb) = (a.cost(hours_per_month), b.cost(hours_per_month));
        if (ca - cb).abs() <= 1e-6 * ca.max(cb) {
            let ha = a.train_hours.unwrap_or(0.0);
            let hb = b.train_hours.unwrap_or(0.0);
            ha.total_cmp(&hb)
                .then(b.card_memory_gb.total_cmp(&a.card_memory_gb))
                .then(a.cards.cmp(&b.cards))
        } else {
            ca.total_cmp(&cb)
        }
    })
}

pub fn fastest<'a, 'c>(list: &'a [Candidate<'c>]) -> Option<&'a Candidate<'c>> {
    fastest_of(list.iter())
}

pub(super) fn fastest_of<'a, 'c: 'a>(
    list: impl Iterator<Item = &'a Candidate<'c>>,
) -> Option<&'a Candidate<'c>> {
    list.filter(|c| c.train_hours.is_some()).min_by(|a, b| {
        a.train_hours
            .unwrap_or(f64::MAX)
            .total_cmp(&b.train_hours.unwrap_or(f64::MAX))
    })
}

/// The precision a card runs at one step-down level (DOMAIN.md §6): the requested
/// precision at its own level; 16-bit; 8-bit as FP8 on FP8 cards or INT8 elsewhere
/// (only the named one of the two when the user named it); INT4.
pub fn precision_at(level: u8, requested: Precision, gpu: &Gpu) -> Option<Precision> {
    if level == requested.level() {
        return (requested != Precision::Fp8 || gpu.fp8()).then_some(requested);
    }
    match level {
        0 => Some(Precision::Fp32),
        1 => Some(Precision::Bf16),
        2 => Some(if gpu.fp8() {
            Precision::Fp8
        } else {
            Precision::Int8
        }),
        _ => Some(Precision::Int4),
    }
}

/// The outcome of the search.
#[derive(Debug, Clone)]
pub struct Plan<'c> {
    pub best: Option<Candidate<'c>>,
    pub stepped_down: bool,
    /// Fits the budget by its lower price only: "possible, ask for a quote".
    pub quote: Option<Candidate<'c>>,
    /// Cheaper than `best`, fits without the 20 % headroom.
    pub tight: Option<Candidate<'c>>,
    pub fastest: Option<Candidate<'c>>,
}

/// Searches the catalog for `w` under `limits`.
pub fn plan<'c>(cat: &'c Catalog, w: &Workload, limits: &Limits) -> Plan<'c> {
    Search::new(cat, w, limits).plan(limits)
}

/// The configuration a budget alone buys (DOMAIN.md §6): within budget, the largest
/// per-card memory, then the most such cards (up to 8).
pub fn budget_pick<'c>(
    cat: &'c Catalog,
    budget: f64,
    domestic: bool,
    card: Option<&str>,
) -> Option<(&'c Offer, &'c Gpu, u32)> {
    let mut best: Option<(&Offer, &Gpu, u32, f64, u32)> = None;
    // A card named ("A100 能租几张"): its offers alone, the most cards within the budget.
    let offers = cat
        .offers
        .iter()
        .filter(|o| card.map_or(o.domestic == domestic, |c| o.gpu == c));
    for o in offers {
        let Some(g) = cat.gpu(&o.gpu) else { continue };
        let mem = card_memory(o, g);
        for &u in &o.counts {
            let cards = u * o.cards_per_unit;
            if cards > 8 || o.price.max * u as f64 > budget + 1e-9 {
                continue;
            }
            let better = match best {
                None => true,
                Some((_, _, _, bm, bc)) => mem > bm || (mem == bm && cards > bc),
            };
            if better {
                best = Some((o, g, u, mem, cards));
            }
        }
    }
    best.map(|(o, g, u, _, _)| (o, g, u))
}

#[cfg(test)]
mod tests;
