use super::*;
use crate::advisor::fixtures::{advisor, workload};

/// The bill of `w` at its own precision as "weights kv activations gradients optimizer",
/// GB with one decimal.
fn check(w: &Workload, expected: &str) {
    let b = bill(w, w.precision);
    let got = [
        b.weights,
        b.kv_cache,
        b.activations(),
        b.gradients,
        b.optimizer,
    ]
    .map(|v| format!("{v:.1}"))
    .join(" ");
    assert_eq!(got, expected, "{w:?}");
}

#[test]
fn full_training_is_sixteen_bytes_per_parameter() {
    let w = workload("qwen-7b", Task::Full, None);
    let n = w.arch.params_b;
    let b = bill(&w, w.precision);
    // 2 (BF16 weight) + 2 (gradient) + 12 (FP32 master and two moments), ZeRO §3.1.
    assert!((b.weights - 2.0 * n).abs() < 1e-9);
    assert!((b.gradients - 2.0 * n).abs() < 1e-9);
    assert!((b.optimizer - 12.0 * n).abs() < 1e-9);
    let mut adam8 = w.clone();
    adam8.optimizer_8bit = true;
    assert!((bill(&adam8, adam8.precision).optimizer - 6.0 * n).abs() < 1e-9);
}

#[test]
fn quantized_weights_keep_16_bit_embeddings() {
    let bf16 = workload("qwen-7b", Task::Inference, None);
    let int4 = workload("qwen-7b", Task::Inference, Some(Precision::Int4));
    let (b16, b4) = (bill(&bf16, bf16.precision), bill(&int4, int4.precision));
    // Not a quarter: embeddings and lm_head stay 16-bit, and group scales add bits.
    assert!(
        b4.weights > b16.weights / 4.0 + 0.5,
        "{} vs {}",
        b4.weights,
        b16.weights
    );
    assert!(b4.weights < b16.weights / 2.0);
    // The KV cache does not depend on the weight format.
    assert_eq!(b4.kv_cache, b16.kv_cache);
}

#[test]
fn bills_of_known_workloads() {
    check(
        &workload("qwen-7b", Task::Inference, None),
        "15.4 4.3 0.2 0.0 0.0",
    );
    check(
        &workload("qwen-14b", Task::Lora, None),
        "28.7 0.0 7.2 0.4 0.7",
    );
    check(
        &workload("qwen-7b", Task::Full, None),
        "15.4 0.0 6.8 15.4 92.6",
    );
}

#[test]
fn splitting_divides_what_tensor_parallelism_and_zero3_divide() {
    let w = workload("qwen-72b", Task::Inference, None);
    let b = bill(&w, w.precision);
    assert!((b.per_card(1) - (b.framework_total() + CUDA_CONTEXT_GB)).abs() < 1e-9);
    let per4 = b.per_card(4);
    assert!(per4 < b.per_card(2) && per4 > b.weights / 4.0);
    let t = workload("qwen-14b", Task::Full, None);
    let bt = bill(&t, t.precision);
    // ZeRO-3: each card keeps its own activations whole.
    assert!(bt.per_card(8) > bt.activations());
}

#[test]
fn speed_follows_bandwidth_and_compute() {
    let cat = &advisor().catalog;
    let w = workload("qwen-7b", Task::Inference, None);
    let b = bill(&w, w.precision);
    let (a100, h100) = (cat.gpu("a100-80g").unwrap(), cat.gpu("h100-sxm").unwrap());
    let s = |g, n| decode_tokens_per_s(&w, &b, w.precision, g, n).expect("decode speed");
    // Faster with more bandwidth, but less than in proportion: fixed costs per step.
    let ratio = s(h100, 1) / s(a100, 1);
    assert!(
        ratio > 1.2 && ratio < h100.bandwidth_gbs / a100.bandwidth_gbs,
        "{ratio}"
    );
    // A 7B model sits on one card of an eight-card machine: one card's speed.
    assert_eq!(s(a100, 8), s(a100, 1));
    let mut t = workload("qwen-7b", Task::Full, None);
    assert_eq!(
        train_hours(&t, a100, 8),
        None,
        "no data size, no training time"
    );
    t.train_tokens = Some(1e9);
    let h8 = train_hours(&t, a100, 8).expect("hours");
    assert!((train_hours(&t, a100, 1).unwrap() / h8 - 8.0).abs() < 1e-9);
}

/// `../shared/eval/measured.py` over `tests/data/measured.jsonl`: each row's question is
/// answered, and its estimate (without the CUDA context, which framework peaks do not
/// see, unless the row was read with nvidia-smi) is compared with the measured peak.
/// The same bars: median |error| ≤ 6 %, worst ≤ 30 %; a row without estimate is 100 %.
#[test]
fn the_measured_memory_table() {
    const ROWS: &str = include_str!("../../../tests/data/measured.jsonl");
    let mut errors = Vec::new();
    for line in ROWS.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
        let question = row["question"].as_str().expect("question");
        let measured = row["measured_gb"].as_f64().expect("measured_gb");
        let whole = row["includes_context"].as_bool().unwrap_or(false);
        let (answer, _) = advisor().answer(question, &Default::default());
        let error = match answer.estimate {
            Some(e) => {
                let got = e.total_gb - if whole { 0.0 } else { e.overhead_gb };
                ((got - measured) / measured).abs()
            }
            None => 1.0,
        };
        errors.push((error, row["id"].as_str().unwrap_or("?").to_string()));
    }
    assert!(errors.len() >= 70, "{} rows", errors.len());
    errors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = errors.len();
    let median = if n % 2 == 1 {
        errors[n / 2].0
    } else {
        (errors[n / 2 - 1].0 + errors[n / 2].0) / 2.0
    };
    let (worst, worst_id) = &errors[n - 1];
    assert!(median <= 0.06, "median |error| {:.1} %", median * 100.0);
    assert!(
        *worst <= 0.30,
        "worst |error| {:.1} % ({worst_id})",
        worst * 100.0
    );
}
