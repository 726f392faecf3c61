use super::*;
use crate::advisor::fixtures::{advisor, workload};
use crate::advisor::workload::{Framework, Logits, LoraTargets, QuantLib, Recipe};

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

/// `../shared/eval/measured.py` over a measured table: each row's question is answered,
/// and its estimate (without the CUDA context, which framework peaks do not see, unless
/// the row was read with nvidia-smi) is compared with the measured peak. A row without
/// estimate is 100 %. Returns the median and worst |error| and the worst row's id.
fn measured_table(rows: &str) -> (usize, f64, f64, String) {
    let mut errors = Vec::new();
    for line in rows.lines().filter(|l| !l.trim().is_empty()) {
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
    errors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = errors.len();
    let median = if n % 2 == 1 {
        errors[n / 2].0
    } else {
        (errors[n / 2 - 1].0 + errors[n / 2].0) / 2.0
    };
    let (worst, worst_id) = errors[n - 1].clone();
    (n, median, worst, worst_id)
}

/// `tests/data/measured.jsonl` (Qwen tables, LLaMA-Factory): median ≤ 6 %, worst ≤ 30 %.
#[test]
fn the_measured_memory_table() {
    let (n, median, worst, worst_id) =
        measured_table(include_str!("../../../tests/data/measured.jsonl"));
    assert!(n >= 70, "{n} rows");
    assert!(median <= 0.06, "median |error| {:.1} %", median * 100.0);
    assert!(
        worst <= 0.30,
        "worst |error| {:.1} % ({worst_id})",
        worst * 100.0
    );
}

/// gpt-oss ships its routed experts in MXFP4 (4.25 bits) and the rest in BF16: about
/// 65 GB for the 120B, which OpenAI's model card runs on one 80 GB card, and within
/// 16 GB for the 20B. Asked in BF16, every weight is 16-bit.
#[test]
fn native_mxfp4_experts_keep_attention_in_bf16() {
    let w = workload("gpt-oss-120b", Task::Inference, None);
    assert_eq!(w.precision, Precision::Int4);
    let b = bill(&w, w.precision);
    let l = &w.arch.layout;
    assert_eq!(l.native_expert_bits, 4.25);
    let want = l.expert_params_b * 4.25 / 8.0 + (w.arch.params_b - l.expert_params_b) * 2.0;
    assert!((b.weights - want).abs() < 1e-9, "{} vs {want}", b.weights);
    assert!(b.per_card(1) <= 0.95 * 80.0, "{}", b.per_card(1));
    let small = workload("gpt-oss-20b", Task::Inference, None);
    assert!(bill(&small, small.precision).per_card(1) <= 16.0);
    let bf16 = workload("gpt-oss-120b", Task::Inference, Some(Precision::Bf16));
    assert!((bill(&bf16, bf16.precision).weights - 2.0 * w.arch.params_b).abs() < 1e-9);
}

/// A diffusion pipeline's text encoders run first and are then offloaded: the peak is
/// the transformer phase unless the encoders alone are larger. FP8 casts the transformer
/// only. Wan2.1-T2V-1.3B fits a 4090 as its README says; FLUX.1-dev does in FP8.
#[test]
fn diffusion_peaks_at_the_larger_phase() {
    let flux = workload("flux.1-dev", Task::Inference, None);
    let l = &flux.arch.layout;
    let denoiser = flux.arch.params_b - l.text_encoder_b - l.vae_b;
    let b = bill(&flux, Precision::Bf16);
    assert!((b.weights - (denoiser + l.vae_b) * 2.0).abs() < 1e-9);
    let fp8 = bill(&flux, Precision::Fp8);
    assert!((fp8.weights - (denoiser + 2.0 * l.vae_b)).abs() < 1e-9);
    assert!(fp8.per_card(1) * 1.2 <= 24.0, "{}", fp8.per_card(1));
    assert!(b.per_card(1) > 0.95 * 24.0);
    let wan = workload("wan2.1-t2v-1.3b", Task::Inference, None);
    let wb = bill(&wan, wan.precision);
    // The umT5 phase (11.4 GB) is the larger one here.
    assert!((wb.framework_total() - wan.arch.layout.text_encoder_b * 2.0).abs() < 1e-9);
    assert!(wb.per_card(1) * 1.2 <= 24.0);
}

/// MLA's latent is on every tensor-parallel card; GQA's KV heads divide.
#[test]
fn mla_kv_does_not_divide_over_cards() {
    let mut w = workload("deepseek-v3", Task::Inference, None);
    w.concurrency = 64;
    let b = bill(&w, w.precision);
    assert!(b.kv_whole);
    let split = b.per_card(8) - (b.weights + b.act_split + b.reserve) / 8.0 - b.act_full;
    assert!((split - b.kv_cache - CUDA_CONTEXT_GB).abs() < 1e-9);
}

/// `tests/data/measured-2.jsonl` (DeepSeek-LLM, optimum GPTQ, ms-swift, Lit-GPT, each
/// with its recipe): median ≤ 8 %, worst ≤ 35 %.
#[test]
fn the_second_measured_memory_table() {
    let (n, median, worst, worst_id) =
        measured_table(include_str!("../../../tests/data/measured-2.jsonl"));
    assert!(n >= 60, "{n} rows");
    assert!(median <= 0.08, "median |error| {:.1} %", median * 100.0);
    assert!(
        worst <= 0.35,
        "worst |error| {:.1} % ({worst_id})",
        worst * 100.0
    );
}

/// `tests/data/measured-3.jsonl` (GLM-4's inference table read with nvidia-smi, AutoAWQ's
/// benchmark, torchao's quantisation table, torchtune's LoRA/QLoRA rows), gathered after
/// the recipe terms were set and not fitted to: median ≤ 10 %, worst ≤ 35 %.
#[test]
fn the_third_measured_memory_table() {
    let (n, median, worst, worst_id) =
        measured_table(include_str!("../../../tests/data/measured-3.jsonl"));
    assert!(n >= 25, "{n} rows");
    assert!(median <= 0.10, "median |error| {:.1} %", median * 100.0);
    assert!(
        worst <= 0.35,
        "worst |error| {:.1} % ({worst_id})",
        worst * 100.0
    );
}

fn with_recipe(mut w: Workload, f: impl Fn(&mut Recipe)) -> Workload {
    f(&mut w.recipe);
    w
}

#[test]
fn eager_attention_holds_one_layers_scores() {
    let w = workload("deepseek-llm-7b", Task::Inference, None);
    let eager = with_recipe(w.clone(), |r| r.attention = Some(Attention::Eager));
    let (b, e) = (bill(&w, w.precision), bill(&eager, eager.precision));
    // A 4096-token context is a 2048-token prompt and its reply: batch 1 × 32 heads ×
    // 2048² × 8 bytes (16-bit scores, FP32 softmax, 16-bit copy), one layer only, in place
    // of the prompt's MLP activations (2048 × 3 × 11008 × 2 bytes), which come after it.
    let scores = 32.0 * 2048.0f64.powi(2) * 8.0 / 1e9;
    let mlp = 2048.0 * 3.0 * 11008.0 * 2.0 / 1e9;
    assert!(
        (e.activations() - b.activations() - (scores - mlp)).abs() < 0.01,
        "{} vs {}",
        e.activations(),
        b.activations()
    );
    // Freed before the decoding peak, the scores' blocks stay in the allocator's pool.
    assert_eq!(b.reserve, 0.0);
    assert!(e.reserve > 0.0);
}

#[test]
fn old_transformers_hold_the_cache_twice_and_the_prompts_logits() {
    let w = workload("llama-2-13b", Task::Inference, None);
    let old = with_recipe(w.clone(), |r| {
        r.framework = Some(Framework::Transformers);
        r.attention = Some(Attention::Eager);
    });
    let (b, o) = (bill(&w, w.precision), bill(&old, old.precision));
    assert_eq!(o.kv_cache, b.kv_cache);
    // The second cache and the FP32 logits of the 2048-token prompt × 32000.
    let logits = 2048.0 * 32000.0 * 4.0 / 1e9;
    assert!(o.activations() >= b.kv_cache + logits, "{o:?}");
    // transformers named without eager: one cache, the last token's logits.
    let sdpa = with_recipe(w.clone(), |r| r.framework = Some(Framework::Transformers));
    let s = bill(&sdpa, sdpa.precision);
    assert_eq!(s, b);
    // Whole-prompt logits when said: 16-bit and FP32 copies after the last layer, 6 bytes
    // a logit, a moment of their own beside the prompt's MLP activations.
    let full = with_recipe(sdpa, |r| r.logits = Some(Logits::Full));
    let f = bill(&full, full.precision);
    let mlp = 2048.0 * 3.0 * 13824.0 * 2.0 / 1e9;
    let last = 32000.0 * 4.0 / 1e9;
    assert!(
        (f.activations() - b.activations() - (logits * 1.5 - mlp - last)).abs() < 0.01,
        "{f:?}"
    );
}

#[test]
fn lora_without_checkpointing_keeps_every_layers_activations() {
    let w = workload("llama-2-7b", Task::Lora, None);
    let off = with_recipe(w.clone(), |r| r.checkpointing = Some(false));
    let (on_b, off_b) = (bill(&w, w.precision), bill(&off, off.precision));
    // 2048 tokens × 32 layers × (9 × 4096 + 3 × 11008) × 2 bytes ≈ 9.2 GB more.
    let saved = 2048.0 * 32.0 * (9.0 * 4096.0 + 3.0 * 11008.0) * 2.0 / 1e9;
    assert!(
        off_b.activations() > on_b.activations() + saved * 0.6,
        "{off_b:?}"
    );
    // QLoRA's bitsandbytes matmuls also keep their inputs.
    let q = workload("llama-2-7b", Task::Qlora, None);
    let q_off = with_recipe(q.clone(), |r| r.checkpointing = Some(false));
    let extra = bill(&q_off, q_off.precision).activations() - bill(&q, q.precision).activations();
    assert!(extra > off_b.activations() - on_b.activations());
}

#[test]
fn a_stated_lora_rank_and_targets_replace_the_default() {
    let w = workload("llama-2-7b", Task::Lora, None);
    let qv8 = with_recipe(w.clone(), |r| {
        r.lora_rank = Some(8);
        r.lora_targets = Some(LoraTargets::QueryValue);
    });
    // r × (in + out) for q and v of 32 layers: 8 × 2 × 8192 × 32 = 4.19 M.
    assert!((lora_params(&qv8) - 8.0 * 2.0 * 8192.0 * 32.0).abs() < 1.0);
    assert!(lora_params(&w) > 10.0 * lora_params(&qv8));
}

#[test]
fn quantisation_libraries_have_their_own_bits() {
    let w = workload("llama-2-7b", Task::Inference, Some(Precision::Int4));
    let lib = |q| with_recipe(w.clone(), |r| r.quant_lib = Some(q));
    let weights = |w: &Workload| bill(w, w.precision).weights;
    let gptq = weights(&w);
    // NF4 without double quantisation: 4.5 bits; GGUF Q4_K_M quantises embeddings too.
    assert!(weights(&lib(QuantLib::BnbNf4)) > gptq);
    assert!(weights(&lib(QuantLib::Torchao)) < weights(&lib(QuantLib::BnbNf4)));
    let gguf = weights(&lib(QuantLib::Gguf));
    assert!((gguf - 6.74 * 4.85 / 8.0).abs() < 0.01, "{gguf}");
}

#[test]
fn variants_price_the_other_recipes() {
    let w = workload("qwen2.5-7b", Task::Inference, None);
    let v = variants(&w, w.precision);
    assert!(
        v.iter().any(|&(k, d)| k == Variant::Eager && d > 0.5),
        "{v:?}"
    );
    assert!(
        v.iter().any(|&(k, d)| k == Variant::FullLogits && d > 0.1),
        "{v:?}"
    );
    let t = workload("qwen2.5-7b", Task::Lora, None);
    let v = variants(&t, t.precision);
    assert!(v
        .iter()
        .any(|&(k, d)| k == Variant::NoCheckpointing && d > 1.0));
    // The other way round, a saving.
    let off = with_recipe(t, |r| {
        r.checkpointing = Some(false);
        r.attention = Some(Attention::Eager);
    });
    let v = variants(&off, off.precision);
    assert!(
        v.iter()
            .any(|&(k, d)| k == Variant::Checkpointing && d < -1.0),
        "{v:?}"
    );
    assert!(
        v.iter().any(|&(k, d)| k == Variant::Flash && d < 0.0),
        "{v:?}"
    );
}

#[test]
fn a_named_zero_stage_divides_what_it_partitions() {
    let w = workload("qwen-14b", Task::Full, None);
    let per8 = |stage: Option<u8>| {
        let s = with_recipe(w.clone(), |r| r.zero_stage = stage);
        bill(&s, s.precision).per_card(8)
    };
    // ZeRO-3 (the default) < stage 2 (weights whole) < stage 1 (gradients whole) < DDP.
    assert!(per8(None) < per8(Some(2)));
    assert!(per8(Some(2)) < per8(Some(1)) && per8(Some(1)) < per8(Some(0)));
    assert_eq!(per8(None), per8(Some(3)));
}
