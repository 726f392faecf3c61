//! KV bytes against the figures engines print, within 2 %.

use super::*;
use crate::advisor::fixtures::workload;
use crate::advisor::workload::{Precision, Task};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

fn within(got: f64, want: f64, what: &str) {
    assert!(
        (got / want - 1.0).abs() <= 0.02,
        "{what}: {got:.2} vs engine {want:.2}"
    );
}

/// llama.cpp's q8_0 stores 32 values in 34 bytes (ggml-common.h block_q8_0).
const Q8_0_PER_BF16: f64 = 34.0 / 32.0 / 2.0;

/// GQA: Hugging Face's Llama 3.1 blog table of KV cache per 1k tokens in FP16 (quoted in
/// huggingface/blog issue #2345): 8B 0.125 GB, 70B 0.313 GB (GiB, 2 × layers × 8 KV
/// heads × 128 × 2 bytes).
#[test]
fn gqa_matches_the_llama_3_1_table() {
    let w8 = workload("llama-3.1-8b", Task::Inference, None);
    within(
        kv_bytes_per_token(&w8) * 1024.0 / GIB,
        0.125,
        "llama-3.1-8b",
    );
    let w70 = workload("llama-3.1-70b", Task::Inference, None);
    within(
        kv_bytes_per_token(&w70) * 1024.0 / GIB,
        0.313,
        "llama-3.1-70b",
    );
}

/// MLA: ik_llama.cpp PR #259 (DeepSeek-R1, n_ctx 32768, q8_0 cache) prints "KV self size
/// = 1166.62 MiB, c^KV (q8_0): 1166.62 MiB": 61 layers × (512 + 64) latent per token.
#[test]
fn mla_matches_the_llama_cpp_latent_cache() {
    let w = workload("deepseek-r1", Task::Inference, None);
    let got = kv_sequence_bytes(&w, 32768.0) * Q8_0_PER_BF16 / MIB;
    within(got, 1166.62, "deepseek-r1 c^KV");
    // The latent is not split by tensor parallelism.
    assert!(kv_whole_on_every_card(&w));
    let dense = workload("llama-3.1-70b", Task::Inference, None);
    assert!(!kv_whole_on_every_card(&dense));
}

/// Hybrid linear attention: a llama-server log of a 64-layer Gated DeltaNet hybrid (16
/// full-attention layers of 4 KV heads × 256, 48 DeltaNet layers of 48 value heads ×
/// 128 × 128 with a 4-wide convolution over 10240 channels) prints
/// "llama_kv_cache: size = 6647.00 MiB (200192 cells, 16 layers, 1/1 seqs), K (q8_0):
/// 3323.50 MiB, V (q8_0): 3323.50 MiB" and "llama_memory_recurrent: ... 149.62 MiB".
#[test]
fn hybrid_layers_hold_kv_only_where_attention_is_full() {
    let mut w = workload("qwen3-32b", Task::Inference, None);
    w.arch.layers = 64.0;
    w.arch.kv_heads = 4.0;
    w.arch.head_dim = 256.0;
    w.arch.layout.linear_layers = 48.0;
    // S: 48 layers × 48 heads × 128 × 128, R: 48 × 3 × 10240, FP32 (importer's formula).
    w.arch.layout.linear_state_bytes = 48.0 * (48.0 * 128.0 * 128.0 + 3.0 * 10240.0) * 4.0;
    let tokens = 200192.0;
    let kv = kv_sequence_bytes(&w, tokens) - w.arch.layout.linear_state_bytes;
    within(kv * Q8_0_PER_BF16 / MIB, 6647.0, "hybrid KV");
    within(
        w.arch.layout.linear_state_bytes / MIB,
        149.62,
        "hybrid recurrent state",
    );
    // Per token, the state is left out: it does not grow with the context.
    w.context = 200192;
    within(
        kv_bytes_per_token(&w) * tokens * Q8_0_PER_BF16 / MIB,
        6647.0,
        "per token",
    );
}

/// Sliding windows: llama.cpp keeps the full context for the global layers and
/// `n_swa + n_ubatch` (512) cells, rounded up to 256, for the windowed ones
/// (src/llama-kv-cache-iswa.cpp, cited by its author in ggml-org/llama.cpp PR #21277).
/// At a long context the window's share is small; we count the window alone.
#[test]
fn windowed_layers_stop_at_their_window() {
    let llama_cpp = |full: f64, swa: f64, per_layer: f64, ctx: f64, window: f64| {
        let swa_cells = ((window + 512.0) / 256.0).ceil() * 256.0;
        (full * ctx + swa * swa_cells) * per_layer
    };
    // gpt-oss-120b: 18 global + 18 windowed (128) layers of 8 KV heads × 64.
    let w = workload("gpt-oss-120b", Task::Inference, None);
    let per = 2.0 * 8.0 * 64.0 * 2.0;
    within(
        kv_sequence_bytes(&w, 131072.0),
        llama_cpp(18.0, 18.0, per, 131072.0, 128.0),
        "gpt-oss-120b at 128k",
    );
    // Windowed layers cost the same at 4k and at 128k; the global ones grow.
    let short = kv_sequence_bytes(&w, 4096.0);
    assert!((short - (18.0 * 4096.0 + 18.0 * 128.0) * per).abs() < 1.0);
    // Gemma 3 27B: 10 global + 52 windowed (1024) layers of 16 KV heads × 128.
    let g = workload("gemma-3-27b", Task::Inference, None);
    let per = 2.0 * 16.0 * 128.0 * 2.0;
    within(
        kv_sequence_bytes(&g, 131072.0),
        llama_cpp(10.0, 52.0, per, 131072.0, 1024.0),
        "gemma-3-27b at 128k",
    );
    // Llama 4 Scout: 12 global + 36 chunked (8192) layers of 8 KV heads × 128.
    let s = workload("llama-4-scout", Task::Inference, None);
    let per = 2.0 * 8.0 * 128.0 * 2.0;
    within(
        kv_sequence_bytes(&s, 131072.0),
        llama_cpp(12.0, 36.0, per, 131072.0, 8192.0),
        "llama-4-scout at 128k",
    );
}

/// An FP8 KV cache halves every attention form; the weight format changes nothing.
#[test]
fn kv_precision_is_the_caches_own() {
    let w = workload("gpt-oss-120b", Task::Inference, None);
    let mut fp8 = w.clone();
    fp8.kv_8bit = true;
    within(
        kv_bytes_per_token(&fp8) * 2.0,
        kv_bytes_per_token(&w),
        "fp8 kv",
    );
    let q = workload("llama-3.1-8b", Task::Inference, Some(Precision::Int4));
    let b = workload("llama-3.1-8b", Task::Inference, None);
    assert_eq!(kv_bytes_per_token(&q), kv_bytes_per_token(&b));
}

/// GQA under tensor parallelism: vllm-project/vllm issue #21348 serves Qwen3-235B-A22B-FP8
/// on 4 H100 (TP 4): vLLM logs "Available KV cache memory: 8.11 GiB" and "GPU KV cache size:
/// 178,880 tokens"; SGLang "#tokens: 367404, K size: 8.23 GB, V size: 8.23 GB" (GiB), per
/// card. The 4 KV heads split one per card: the whole model's bytes per token ÷ 4.
#[test]
fn gqa_matches_vllm_and_sglang_per_card() {
    let w = workload("qwen3-235b-a22b", Task::Inference, Some(Precision::Fp8));
    let per_card = kv_bytes_per_token(&w) / 4.0;
    within(
        per_card,
        8.11 * GIB / 178_880.0,
        "vLLM per-card bytes per token",
    );
    within(
        per_card,
        2.0 * 8.23 * GIB / 367_404.0,
        "SGLang per-card bytes per token",
    );
    // The weights' FP8 leaves the cache at 2 bytes per value.
    assert!(!w.kv_8bit);
}
