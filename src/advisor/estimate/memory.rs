//! Inference memory: weights at their format's real bits (quantized formats with their
//! scales, embeddings 16-bit) and the prefill peak of activations (DOMAIN.md §7).
//! Formulas only: which precision a job runs at is the caller's choice.

use super::kv::{kv_sequence_bytes, kv_whole_on_every_card};
use super::{Bill, Split, GB};
use crate::advisor::workload::{Precision, Workload};

/// GPTQ/AWQ group-wise quantization with group size 128: 4 (8) bits per weight plus a
/// 16-bit scale and a packed zero per group ≈ 4.16 (8.2) bits (DOMAIN.md §7).
const INT4_BITS: f64 = 4.16;
const INT8_BITS: f64 = 8.2;
/// bitsandbytes NF4 with double quantization: 4 + 0.127 bits (QLoRA paper, §3).
pub(super) const NF4_BITS: f64 = 4.127;
/// OCP Microscaling FP4: 4-bit E2M1 elements plus one 8-bit E8M0 scale per block of 32
/// (OCP MX spec v1.0 §5) = 4.25 bits per weight.
const MXFP4_BITS: f64 = 4.25;
/// FP8 with per-block (128×128) scales: the scales add < 0.01 bits.
const FP8_BITS: f64 = 8.0;
/// Hidden-size tensors live per prompt token during prefill besides the three
/// intermediate-size tensors of a SwiGLU MLP (gate, up, their product): residual,
/// norm output, attention output, Q/K/V (fitted: 6).
const PREFILL_HIDDEN_TENSORS: f64 = 6.0;
/// The context holds the prompt and the reply; a reply of up to this many tokens (the
/// usual `max_new_tokens`) is generated after the prompt, which is the rest of the
/// context but at least half of it (fitted against the measured prefill peaks).
const REPLY_TOKENS: f64 = 2048.0;
/// Prompt tokens a serving engine prefills at once across concurrent requests
/// (vLLM `max_num_batched_tokens`-style budget; HF generate prefills the whole batch).
const PREFILL_TOKEN_BUDGET: f64 = 32768.0;

fn bits_for(p: Precision) -> f64 {
    match p {
        Precision::Fp32 => 32.0,
        Precision::Bf16 | Precision::Fp16 => 16.0,
        Precision::Fp8 => FP8_BITS,
        Precision::Int8 => INT8_BITS,
        Precision::Int4 => INT4_BITS,
    }
}

/// Bits per weight of a diffusion pipeline's text encoders at precision `p`: 16-bit
/// unless the checkpoint quantizes them with the transformer (INT8/INT4), or FP32.
pub(super) fn diffusion_encoder_bits(p: Precision) -> f64 {
    match p {
        Precision::Fp32 | Precision::Int8 | Precision::Int4 => bits_for(p),
        _ => 16.0,
    }
}

/// Weight memory: block linears at the format's bits, embeddings and lm_head 16-bit
/// (DOMAIN.md §7); MoE keeps every expert resident, so total parameters count.
pub(super) fn weight_bytes(w: &Workload, p: Precision, bits_override: Option<f64>) -> f64 {
    let a = &w.arch;
    let total = a.params_b * 1e9;
    let bits = bits_override.unwrap_or_else(|| bits_for(p));
    let l = &a.layout;
    if l.mxfp4_experts && p == Precision::Int4 && bits_override.is_none() {
        // The native format: routed experts in MXFP4, attention, router, embeddings and
        // lm_head BF16 (gpt-oss config.json quantization_config.modules_to_not_convert).
        let experts = l.expert_params_b * 1e9;
        return experts * MXFP4_BITS / 8.0 + (total - experts) * 2.0;
    }
    if a.diffusion && bits < 16.0 {
        // Quantized diffusion: FP8 casts the transformer only (diffusers' layerwise
        // casting); the 8- and 4-bit bitsandbytes checkpoints the vendors publish quantize
        // the text encoders too ("quantized text-encoder and DiT. VAE still in bf16":
        // diffusers/FLUX.2-dev-bnb-4bit; hf-internal-testing/flux.1-dev-int8-pkg). The
        // VAE stays 16-bit.
        let rest = if p == Precision::Fp8 {
            (l.text_encoder_b + l.vae_b) * 1e9
        } else {
            l.vae_b * 1e9
        };
        return (total - rest) * bits / 8.0 + rest * 2.0;
    }
    if bits >= 16.0 {
        return total * bits / 8.0;
    }
    let emb = a.embedding_params();
    (total - emb) * bits / 8.0 + emb * 2.0
}

/// Dequantization workspace of quantized kernels: about one large linear in FP16.
fn dequant_workspace(w: &Workload, p: Precision) -> f64 {
    if p.is_quantized() {
        w.arch.hidden * w.arch.intermediate * 2.0
    } else {
        0.0
    }
}

/// The inference bill: weights, the KV cache of every sequence and the activations at
/// the end of prefill.
pub(super) fn inference_bill(w: &Workload, p: Precision) -> Bill {
    let a = &w.arch;
    let ctx = w.context as f64;
    let conc = w.concurrency as f64;
    let kv = kv_sequence_bytes(w, ctx) * conc;
    // Peak at the end of prefill: the prompt's live activations (three
    // intermediate-size tensors of a SwiGLU MLP and a few hidden-size ones per
    // token); FlashAttention/SDPA leave no context² term (DOMAIN.md §7).
    let prompt_one = (ctx - REPLY_TOKENS).max(ctx / 2.0);
    let prompt = (prompt_one * conc).min(PREFILL_TOKEN_BUDGET.max(prompt_one));
    let split = prompt * 3.0 * a.intermediate * 2.0 + dequant_workspace(w, p);
    let full = prompt * PREFILL_HIDDEN_TENSORS * a.hidden * 2.0
        // Logits of the last token per sequence, FP32.
        + conc * a.vocab * 4.0;
    Bill {
        weights: weight_bytes(w, p, None) / GB,
        kv_cache: kv / GB,
        act_split: split / GB,
        act_full: full / GB,
        gradients: 0.0,
        optimizer: 0.0,
        split: Split::Tensor,
        kv_whole: kv_whole_on_every_card(w),
    }
}
