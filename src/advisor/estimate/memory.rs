//! Inference memory: weights at their format's real bits (quantized formats with their
//! scales, embeddings 16-bit) and the prefill peak of activations (DOMAIN.md §7).
//! Formulas only: which precision a job runs at is the caller's choice.

use super::kv::{kv_sequence_bytes, kv_whole_on_every_card};
use super::{Bill, Split, ALLOCATOR_RESERVE, GB};
use crate::advisor::workload::{Attention, Framework, Logits, Precision, QuantLib, Workload};

/// GPTQ/AWQ group-wise quantization with group size 128: 4 (8) bits per weight plus a
/// 16-bit scale and a packed zero per group ≈ 4.16 (8.2) bits (DOMAIN.md §7).
const INT4_BITS: f64 = 4.16;
const INT8_BITS: f64 = 8.2;
/// bitsandbytes NF4 with double quantization: 4 + 0.127 bits (QLoRA paper, §3).
pub(super) const NF4_BITS: f64 = 4.127;
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
/// Eager attention materialises one layer's scores, batch × heads × prompt², at a time:
/// transformers' eager attention (modeling_llama.py) softmaxes them in FP32
/// (`softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)`), AutoAWQ's
/// fused attention likewise (`softmax(scores.float())`): the 16-bit scores, their FP32
/// softmax and its 16-bit copy, 2 + 4 + 2 bytes per score at the peak.
pub(super) const EAGER_SCORE_BYTES: f64 = 8.0;
/// Logits for every prompt token, upcast to FP32 (`logits = logits.float()` in
/// transformers' modeling_llama.py before 4.45) and still held by `generate`'s `outputs`
/// while the first decoding step runs.
const FULL_LOGIT_BYTES: f64 = 4.0;
/// bitsandbytes quantises each weight as it is moved to the card: the 16-bit tensor and
/// its contiguous FP16 copy live while `quantize_4bit`/`int8_vectorwise_quant` writes the
/// packed one (bitsandbytes nn/modules.py `Params4bit._quantize`; Lightning's
/// `plugins/precision/bitsandbytes.py` `quantize_`); torchao's `quantize_` likewise
/// quantises each linear on the card from its 16-bit copy: 2 + 2 bytes per weight of the
/// largest quantised linear, a transient the peak keeps.
const QUANTISE_ON_LOAD_BYTES: f64 = 4.0;

fn bits_for(p: Precision) -> f64 {
    match p {
        Precision::Fp32 => 32.0,
        Precision::Bf16 | Precision::Fp16 => 16.0,
        Precision::Fp8 => FP8_BITS,
        Precision::Int8 => INT8_BITS,
        Precision::Int4 => INT4_BITS,
    }
}

/// Bits per weight, and whether the LM head is quantised too, of a library's formats
/// where they differ from GPTQ/AWQ's (group 128 with 16-bit scales and packed zeros):
/// - bitsandbytes NF4 for inference: blocks of 64 with an FP32 absmax, 4.5 bits
///   (functional.py `quantize_4bit`; transformers' `bnb_4bit_use_double_quant` is off by
///   default); LLM.int8: one FP32 scale per row, ≈ 8 bits; both skip `lm_head`, except
///   LitGPT, which quantises every nn.Linear;
/// - torchao `int4_weight_only` (group 128, BF16 scale and zero per group: 4.25 bits) and
///   `int8_weight_only` (per-channel: ≈ 8 bits); `quantize_` takes every nn.Linear,
///   `lm_head` included;
/// - GGUF: Q4_K_M ≈ 4.85 and Q8_0 = 8.5 bits (32 weights and an FP16 scale), embeddings
///   and output quantised alike (llama.cpp ggml-quants; DOMAIN.md §8).
fn library_bits(w: &Workload, p: Precision) -> Option<(f64, bool)> {
    let lm_head = w.recipe.framework == Some(Framework::Litgpt);
    Some(match (w.recipe.quant_lib?, p) {
        (QuantLib::BnbNf4, Precision::Int4) if !w.task.is_training() => (4.5, lm_head),
        (QuantLib::BnbInt8, Precision::Int8) => (8.0, lm_head),
        (QuantLib::Torchao, Precision::Int4) => (4.25, true),
        (QuantLib::Torchao, Precision::Int8) => (8.0, true),
        (QuantLib::Gguf, Precision::Int4) => (4.85, true),
        (QuantLib::Gguf, Precision::Int8) => (8.5, true),
        _ => return None,
    })
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
/// (DOMAIN.md §7) unless the library quantises the head too (GGUF quantises the
/// embeddings as well); MoE keeps every expert resident, so total parameters count.
pub(super) fn weight_bytes(w: &Workload, p: Precision, bits_override: Option<f64>) -> f64 {
    let a = &w.arch;
    let total = a.params_b * 1e9;
    let lib = bits_override
        .is_none()
        .then(|| library_bits(w, p))
        .flatten();
    let bits = bits_override
        .or(lib.map(|(b, _)| b))
        .unwrap_or_else(|| bits_for(p));
    let l = &a.layout;
    if l.native_expert_bits > 0.0
        && p == Precision::Int4
        && bits_override.is_none()
        && lib.is_none()
    {
        // The native format: routed experts in 4 bits, attention, router, shared experts,
        // embeddings and lm_head BF16 (gpt-oss config.json
        // quantization_config.modules_to_not_convert; Kimi K2 Thinking's compressed-tensors
        // `ignore` list).
        let experts = l.expert_params_b * 1e9;
        return experts * l.native_expert_bits / 8.0 + (total - experts) * 2.0;
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
    if w.recipe.quant_lib == Some(QuantLib::Gguf) && lib.is_some() {
        return total * bits / 8.0;
    }
    let emb = match lib {
        // The head is quantised: only the input embedding stays 16-bit.
        Some((_, true)) if !a.tied => a.embedding_params() / 2.0,
        _ => a.embedding_params(),
    };
    (total - emb) * bits / 8.0 + emb * 2.0
}

/// Dequantization workspace of quantized kernels while they compute: about one large
/// linear in FP16 (exllama's `temp_dq`, AWQ's dequantised GEMM input, bitsandbytes'
/// `dequantize_4bit` of the weight for a prompt's matmul or a backward).
pub(super) fn dequant_workspace(w: &Workload, p: Precision) -> f64 {
    if p.is_quantized() {
        w.arch.hidden * w.arch.intermediate * 2.0
    } else {
        0.0
    }
}

/// The load-time transient of libraries that quantise as the weights reach the card
/// (bitsandbytes, torchao's `quantize_`): the largest quantised linear in 16 bits and its
/// working copy while it is packed. LitGPT and torchao quantise every nn.Linear, the LM
/// head too; transformers' bitsandbytes integration skips `lm_head`
/// (`llm_int8_skip_modules`). A moment of its own (loading), so it counts only where it
/// exceeds what inference holds later.
fn quantise_on_load(w: &Workload, p: Precision) -> f64 {
    let lib = match w.recipe.quant_lib {
        Some(q) if p.is_quantized() && (q.is_bitsandbytes() || q == QuantLib::Torchao) => q,
        _ => return 0.0,
    };
    let a = &w.arch;
    let linear = a.hidden * a.intermediate;
    let largest = if lib == QuantLib::Torchao || w.recipe.framework == Some(Framework::Litgpt) {
        linear.max(a.vocab * a.hidden)
    } else {
        linear
    };
    QUANTISE_ON_LOAD_BYTES * largest
}

/// One layer's eager attention scores for `seqs` sequences of `tokens` (0 with
/// FlashAttention/SDPA, whose kernels never hold the scores).
pub(super) fn eager_scores(w: &Workload, seqs: f64, tokens: f64) -> f64 {
    if w.recipe.attention() == Attention::Eager {
        seqs * w.arch.heads * tokens * tokens * EAGER_SCORE_BYTES
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
    // transformers' `generate` (and AutoAWQ's, which runs under it) prefills the whole
    // batch at once: no serving engine's budget applies.
    let whole_batch = matches!(
        w.recipe.framework,
        Some(Framework::Transformers | Framework::Autoawq)
    );
    let prompt = if whole_batch {
        prompt_one * conc
    } else {
        (prompt_one * conc).min(PREFILL_TOKEN_BUDGET.max(prompt_one))
    };
    // The recipe's prefill terms (eager scores, whole-prompt logits) are of the prompt, the
    // context less its reply as above; the tuple cache's second copy is of the context.
    let recipe = &w.recipe;
    // transformers ≤ 4.35 (tuple caches): the previous step's cache is still held while
    // each layer's `torch.cat` builds the next, so the cache is there twice at the end of
    // a step (unless the model's own code already counts it twice, kv_copies).
    let tuple_kv = if recipe.tuple_cache() {
        kv * (2.0 / a.kv_copies - 1.0).max(0.0)
    } else {
        0.0
    };
    let (last_logits, prompt_logits) = match recipe.logits() {
        Logits::Full => (0.0, conc * prompt_one * a.vocab * FULL_LOGIT_BYTES),
        // Logits of the last token per sequence, FP32.
        Logits::Last => (conc * a.vocab * 4.0, 0.0),
    };
    let scores = eager_scores(w, conc, prompt_one);
    // Three intermediate-size tensors at the MLP's peak (gate's activation, up, their
    // product); four where gate and up come out of one fused linear (2 × intermediate,
    // held until its halves are multiplied).
    let mlp_tensors = if a.layout.fused_gate_up { 4.0 } else { 3.0 };
    let prompt_acts = prompt * mlp_tensors * a.intermediate * 2.0;
    // The peak is the largest of the moments that do not overlap: within a layer of the
    // prefill, its attention scores, then its MLP's activations; after the last layer the
    // 16-bit logits and their FP32 copy (6 bytes for 4); and the first decoding step,
    // holding the FP32 prompt logits and the second cache of a tuple-cache release.
    let moments = prompt_acts
        .max(scores)
        .max(prompt_logits * 1.5)
        .max(tuple_kv + prompt_logits);
    // LLM.int8 multiplies the prompt's int8 rows into an int32 accumulator before
    // dequantising it (bitsandbytes `int8_linear_matmul` then `int8_mm_dequant`): 4 bytes
    // per prompt token of the widest output, beside its 16-bit result.
    let int8_accumulator = if p == Precision::Int8 && w.recipe.quant_lib == Some(QuantLib::BnbInt8)
    {
        prompt * a.intermediate * 4.0
    } else {
        0.0
    };
    let split = (dequant_workspace(w, p) + int8_accumulator + moments).max(quantise_on_load(w, p));
    let full = prompt * PREFILL_HIDDEN_TENSORS * a.hidden * 2.0 + last_logits;
    Bill {
        weights: weight_bytes(w, p, None) / GB,
        kv_cache: kv / GB,
        act_split: split / GB,
        act_full: full / GB,
        gradients: 0.0,
        optimizer: 0.0,
        reserve: ALLOCATOR_RESERVE * (scores + prompt_logits) / GB,
        split: Split::Tensor,
        kv_whole: kv_whole_on_every_card(w),
    }
}
