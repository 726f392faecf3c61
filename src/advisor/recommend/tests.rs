use super::*;
use crate::advisor::fixtures::{advisor, workload};
use crate::advisor::workload::Task;

/// The plan's best configuration as "offer×units precision", " stepped down" when the
/// precision was lowered, or "none".
fn check(w: &Workload, limits: &Limits, expected: &str) {
    let plan = plan(&advisor().catalog, w, limits);
    let got = match &plan.best {
        None => "none".to_string(),
        Some(c) => format!(
            "{}×{} {}{}",
            c.offer.id,
            c.units,
            c.precision.id(),
            if plan.stepped_down {
                " stepped down"
            } else {
                ""
            }
        ),
    };
    assert_eq!(got, expected, "{limits:?}");
    if let Some(c) = &plan.best {
        // DOMAIN.md §6: 20 % headroom over the need per card.
        assert!(c.per_card_gb * HEADROOM <= c.card_memory_gb + 1e-9);
        assert!(limits.budget.is_none_or(|b| c.monthly().max <= b + 1e-9));
    }
}

fn on(gpu: &str, count: Option<u32>) -> Limits {
    Limits {
        gpu: Some(gpu.into()),
        count,
        ..Limits::default()
    }
}

#[test]
fn the_cheapest_configuration_that_fits() {
    let l = Limits::default();
    // V100S has no BF16: 16-bit weights run as FP16, same memory.
    check(
        &workload("qwen-7b", Task::Inference, None),
        &l,
        "v100s-32g×1 fp16",
    );
    check(
        &workload("qwen-72b", Task::Inference, None),
        &l,
        "v100s-32g×8 fp16",
    );
}

#[test]
fn serving_steps_down_and_training_does_not() {
    // 14B on one 4090: BF16 does not fit with headroom, a lower precision does.
    let w = workload("qwen-14b", Task::Inference, None);
    check(&w, &on("rtx4090", Some(1)), "rtx4090×1 int4 stepped down");
    // 72B does not fit one 4090 even at INT4.
    let w = workload("qwen-72b", Task::Inference, None);
    check(&w, &on("rtx4090", Some(1)), "none");
    let full = workload("qwen-72b", Task::Full, None);
    check(&full, &on("rtx4090", None), "none");
}

#[test]
fn a_budget_caps_the_monthly_price() {
    // LoRA on 14B needs two A100 40G or more: above ¥3,000 a month.
    let w = workload("qwen-14b", Task::Lora, None);
    check(
        &w,
        &Limits {
            budget: Some(3000.0),
            ..Limits::default()
        },
        "none",
    );
}

#[test]
fn what_rules_out_an_offer() {
    let cat = &advisor().catalog;
    let why = |offer: &str, cards: u32, w: &Workload, p: Precision| {
        let o = cat.offer(offer).expect("offer");
        ineligible(o, cat.gpu(&o.gpu).expect("gpu"), cards, w, p)
    };
    let lora = workload("qwen-7b", Task::Lora, None);
    let serve = workload("qwen-7b", Task::Inference, None);
    assert_eq!(why("t4", 1, &lora, Precision::Bf16), Some("inference-only"));
    assert_eq!(why("v100s-32g", 1, &lora, Precision::Bf16), Some("no-bf16"));
    assert_eq!(why("rtx4090", 2, &lora, Precision::Bf16), Some("no-nvlink"));
    assert_eq!(why("a100-40g", 1, &serve, Precision::Fp8), Some("no-fp8"));
    assert_eq!(why("a100-40g", 1, &lora, Precision::Bf16), None);
}

/// One search serves every plan of an answer: each plan must be what a search made
/// for it alone finds, level by level from `candidates`, the selection by itself.
#[test]
fn plans_of_one_search_match_searches_of_their_own() {
    let cat = &advisor().catalog;
    let hpm = cat.billing.hours_per_month;
    for w in [
        workload("qwen-7b", Task::Inference, None),
        workload("qwen-72b", Task::Inference, Some(Precision::Fp8)),
        workload("qwen-14b", Task::Lora, None),
        workload("qwen-72b", Task::Full, None),
    ] {
        let search = Search::new(cat, &w, &Limits::default());
        for limits in [
            Limits::default(),
            on("a100-80g", None),
            on("rtx4090", Some(2)),
            on("h100-sxm", Some(8)),
        ] {
            let shared = search.plan(&limits).best;
            let levels = if w.task == Task::Inference {
                w.precision.level()..=3
            } else {
                w.precision.level()..=w.precision.level()
            };
            let own = levels
                .filter_map(|level| {
                    let pf = |g: &Gpu| match w.task {
                        Task::Inference => precision_at(level, w.precision, g),
                        _ => Some(w.precision),
                    };
                    let fitting: Vec<Candidate<'_>> = candidates(cat, &w, &limits, &pf)
                        .into_iter()
                        .filter(|c| c.fits_headroom())
                        .collect();
                    cheapest(&fitting, hpm).cloned()
                })
                .next();
            let id = |c: &Option<Candidate<'_>>| {
                c.as_ref()
                    .map(|c| (c.offer.id.clone(), c.units, c.precision))
            };
            assert_eq!(id(&shared), id(&own), "{limits:?} {w:?}");
        }
    }
}

/// The INT4 alternative of a served model is read from the model's own search.
#[test]
fn int4_from_the_search_is_the_int4_variant_searched_alone() {
    let cat = &advisor().catalog;
    for model in ["qwen-7b", "qwen-72b", "deepseek-r1"] {
        let w = workload(model, Task::Inference, None);
        let mut v = w.clone();
        v.precision = Precision::Int4;
        for limits in [
            Limits::default(),
            Limits {
                budget: Some(5000.0),
                ..Limits::default()
            },
        ] {
            let shared = Search::new(cat, &w, &limits).plan_from(3, &limits).best;
            let own = plan(cat, &v, &limits).best;
            let id = |c: &Option<Candidate<'_>>| {
                c.as_ref()
                    .map(|c| (c.offer.id.clone(), c.units, c.precision, c.per_card_gb))
            };
            assert_eq!(id(&shared), id(&own), "{model} {limits:?}");
        }
    }
}
