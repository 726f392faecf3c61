//! The search: every configuration of the catalog for one workload, built once per
//! answer, level by level down the precision ladder, with each memory bill computed once
//! per precision. Plans under different card limits are selections over it. It applies
//! the rules of the parent module; it adds none of its own.

use super::{
    card_memory, cheapest_of, fastest_of, ineligible, precision_at, within_budget, Candidate,
    Limits, Plan,
};
use crate::advisor::catalog::{Catalog, Gpu, Offer, Unit};
use crate::advisor::estimate::{self, Bill};
use crate::advisor::workload::{Precision, Task, Workload};
use std::cell::OnceCell;

/// Builds a candidate for `units` of `offer` at precision `p`.
pub fn candidate<'c>(
    cat: &'c Catalog,
    offer: &'c Offer,
    units: u32,
    w: &Workload,
    p: Precision,
) -> Option<Candidate<'c>> {
    let gpu = cat.gpu(&offer.gpu)?;
    Some(build(offer, gpu, units, w, p, &estimate::bill(w, p)))
}

fn build<'c>(
    offer: &'c Offer,
    gpu: &'c Gpu,
    units: u32,
    w: &Workload,
    p: Precision,
    bill: &Bill,
) -> Candidate<'c> {
    let cards = units * offer.cards_per_unit;
    Candidate {
        offer,
        gpu,
        units,
        cards,
        precision: p,
        train_hours: estimate::train_hours(w, gpu, cards),
        decode_tokens_per_s: estimate::decode_tokens_per_s(w, bill, p, gpu, cards),
        per_card_gb: bill.per_card(cards),
        bill: bill.clone(),
        card_memory_gb: card_memory(offer, gpu),
        months_limit: None,
    }
}

/// Every eligible configuration of the catalog under `limits`, with the precision
/// chosen per card by `precision_for` (None: this card can't run that level).
pub fn candidates<'c>(
    cat: &'c Catalog,
    w: &Workload,
    limits: &Limits,
    precision_for: &dyn Fn(&Gpu) -> Option<Precision>,
) -> Vec<Candidate<'c>> {
    let bills = Bills::new(w);
    let mut out = Vec::new();
    for (offer, gpu) in offers(cat, limits) {
        if limits.gpu.as_deref().is_some_and(|g| g != offer.gpu) {
            continue;
        }
        push_offer(&mut out, offer, gpu, w, &bills, limits, precision_for);
    }
    out
}

/// The offers of the catalog the search looks at, with their GPU: domestic hardware only
/// when asked for, never otherwise (DOMAIN.md §6); none of a card the user declined, nor a
/// slice when whole cards are asked for.
fn offers<'c>(cat: &'c Catalog, limits: &Limits) -> impl Iterator<Item = (&'c Offer, &'c Gpu)> {
    let domestic = limits.domestic;
    let exclude = limits.exclude.clone();
    let whole = limits.whole_cards;
    cat.offers
        .iter()
        .filter(move |o| o.domestic == domestic && !exclude.contains(&o.gpu))
        .filter(move |o| !(whole && o.unit == Unit::Slice))
        .filter_map(|o| Some((o, cat.gpu(&o.gpu)?)))
}

fn push_offer<'c>(
    out: &mut Vec<Candidate<'c>>,
    offer: &'c Offer,
    gpu: &'c Gpu,
    w: &Workload,
    bills: &Bills<'_>,
    limits: &Limits,
    precision_for: &dyn Fn(&Gpu) -> Option<Precision>,
) {
    let Some(p) = precision_for(gpu) else {
        return;
    };
    // Cards without BF16 (T4, V100S) run 16-bit weights as FP16: same memory.
    let p = if p == Precision::Bf16 && !gpu.bf16 {
        Precision::Fp16
    } else {
        p
    };
    for &units in &offer.counts {
        let cards = units * offer.cards_per_unit;
        if limits.count.is_some_and(|c| c != cards && c != units) {
            continue;
        }
        if ineligible(offer, gpu, cards, w, p).is_some() {
            continue;
        }
        let mut c = build(offer, gpu, units, w, p, bills.get(p));
        c.months_limit = limits.months;
        out.push(c);
    }
}

/// The memory bills of one workload, each computed the first time a precision needs it:
/// a search prices every configuration at a handful of precisions, and the bill depends
/// only on the workload and the precision.
pub struct Bills<'w> {
    w: &'w Workload,
    by_precision: [OnceCell<Bill>; Precision::COUNT],
}

impl<'w> Bills<'w> {
    pub fn new(w: &'w Workload) -> Bills<'w> {
        Bills {
            w,
            by_precision: Default::default(),
        }
    }
    /// The bill of the workload at `p`: [`estimate::bill`], computed once.
    pub fn get(&self, p: Precision) -> &Bill {
        self.by_precision[p.index()].get_or_init(|| estimate::bill(self.w, p))
    }
}

/// One workload's search: every configuration of the catalog at each precision level
/// it may step down to, built once (level by level, as a plan first needs it) and shared
/// by the plans of one answer, which differ only in the card and count they keep to.
pub struct Search<'c, 'w> {
    cat: &'c Catalog,
    w: &'w Workload,
    bills: Bills<'w>,
    months: Option<f64>,
    offers: Vec<(&'c Offer, &'c Gpu)>,
    /// Candidates per step-down level (index = `Precision::level`), without card limits.
    levels: [OnceCell<Vec<Candidate<'c>>>; 4],
}

impl<'c, 'w> Search<'c, 'w> {
    /// The search for `w`, domestic or not, without the declined cards and over the
    /// rental period as `limits` say;
    /// their card, count and budget are applied by [`Search::plan`].
    pub fn new(cat: &'c Catalog, w: &'w Workload, limits: &Limits) -> Search<'c, 'w> {
        Search {
            cat,
            w,
            bills: Bills::new(w),
            months: limits.months,
            offers: offers(cat, limits).collect(),
            levels: Default::default(),
        }
    }

    pub fn workload(&self) -> &'w Workload {
        self.w
    }

    /// The workload's bill at `p`, computed once per search.
    pub fn bill(&self, p: Precision) -> &Bill {
        self.bills.get(p)
    }

    fn level(&self, level: u8) -> &[Candidate<'c>] {
        self.levels[level as usize].get_or_init(|| {
            let w = self.w;
            let pf = |g: &Gpu| {
                if w.task == Task::Inference {
                    precision_at(level, w.precision, g)
                } else {
                    Some(w.precision)
                }
            };
            let all = Limits {
                months: self.months,
                ..Limits::default()
            };
            let counts = self.offers.iter().map(|(o, _)| o.counts.len()).sum();
            let mut out = Vec::with_capacity(counts);
            for &(offer, gpu) in &self.offers {
                push_offer(&mut out, offer, gpu, w, &self.bills, &all, &pf);
            }
            out
        })
    }

    /// The plan under `limits` (whose `domestic` and `months` must be the search's):
    /// the cheapest fitting configuration at the first precision level that has one,
    /// and the alternatives around it (DOMAIN.md §6).
    pub fn plan(&self, limits: &Limits) -> Plan<'c> {
        self.plan_from(self.w.precision.level(), limits)
    }

    /// As [`plan`](Self::plan), for serving from step-down level `first` on: the plan of
    /// the same workload asked at that level's precision (its INT4 variant is level 3).
    pub fn plan_from(&self, first: u8, limits: &Limits) -> Plan<'c> {
        let w = self.w;
        let hpm = self.cat.billing.hours_per_month;
        let levels = if w.task == Task::Inference {
            first..=3
        } else {
            first..=first
        };
        let mut out = Plan {
            best: None,
            stepped_down: false,
            quote: None,
            tight: None,
            fastest: None,
        };
        let kept = |c: &&Candidate<'c>| {
            limits.gpu.as_deref().is_none_or(|g| g == c.offer.gpu)
                && limits.count.is_none_or(|n| n == c.cards || n == c.units)
        };
        for level in levels {
            let all = self.level(level).iter().filter(kept);
            let fitting = all.clone().filter(|c| c.fits_headroom());
            let affordable = fitting.clone().filter(|c| within_budget(c, limits.budget));
            if out.quote.is_none() && limits.budget.is_some() {
                out.quote = fitting
                    .clone()
                    .filter(|c| {
                        !within_budget(c, limits.budget)
                            && limits.budget.is_some_and(|b| c.monthly().min <= b)
                    })
                    .min_by(|a, b| a.cost(hpm).total_cmp(&b.cost(hpm)))
                    .cloned();
            }
            if let Some(best) = cheapest_of(affordable.clone(), hpm) {
                let cost = best.cost(hpm);
                out.tight = all
                    .filter(|c| {
                        !c.fits_headroom()
                            && c.fits_tight()
                            && c.cost(hpm) < cost
                            && within_budget(c, limits.budget)
                    })
                    .min_by(|a, b| a.cost(hpm).total_cmp(&b.cost(hpm)))
                    .cloned();
                out.fastest = fastest_of(affordable)
                    .filter(|f| f.train_hours < best.train_hours)
                    .cloned();
                out.stepped_down = level != w.precision.level();
                out.best = Some(best.clone());
                return out;
            }
        }
        out
    }
}
