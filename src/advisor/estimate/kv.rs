//! The KV cache: what one sequence holds, from the attention layout of the architecture.
//!
//! - MHA/GQA/MQA layers: 2 (K and V) × KV heads × head dim × bytes per token.
//! - MLA (DeepSeek-V2 paper §2.1): the compressed latent, kv_lora_rank + rope dim values
//!   per token per layer; every tensor-parallel card holds it whole (vLLM's MLA backends
//!   keep one latent head, not split by TP).
//! - Sliding-window and chunked-local layers (Gemma 2/3, gpt-oss, Llama 4): at most
//!   the window (chunk) of tokens each.
//! - Linear-attention layers (Gated DeltaNet in Qwen3-Next and Qwen3.5): no per-token KV,
//!   a fixed recurrent state per sequence.
//! - Cross-attention layers (Llama 3.2 Vision): the image's K/V, fixed per sequence.

use crate::advisor::catalog::KvForm;
use crate::advisor::workload::Workload;

/// Bytes one token holds in one attention layer at the KV precision (2 bytes, or 1 for
/// an FP8/INT8 KV cache).
fn per_layer_token(w: &Workload) -> f64 {
    let a = &w.arch;
    let bytes = if w.kv_8bit { 1.0 } else { 2.0 };
    match a.kv_form {
        KvForm::Mla => a.kv_latent_dim * bytes,
        _ => 2.0 * a.kv_heads * a.head_dim * bytes,
    }
}

/// KV bytes of one sequence of `tokens` tokens: full-attention layers grow with it,
/// windowed layers stop at their window, linear-attention layers hold their fixed state.
pub fn kv_sequence_bytes(w: &Workload, tokens: f64) -> f64 {
    let a = &w.arch;
    let l = &a.layout;
    let full = (a.layers - l.sliding_layers - l.linear_layers - l.cross_layers).max(0.0);
    let per = per_layer_token(w);
    let windowed = l.sliding_layers * per * tokens.min(l.sliding_window);
    (full * per * tokens + windowed) * a.kv_copies + fixed_state(w)
}

/// What a sequence holds whatever its length: linear-attention state and the image K/V
/// of cross-attention layers.
fn fixed_state(w: &Workload) -> f64 {
    let l = &w.arch.layout;
    l.linear_state_bytes + l.cross_state_bytes
}

/// KV cache bytes per token of one sequence of the workload's context, summed over all
/// layers and cards: windowed layers counted at their cap, linear-attention state and
/// cross-attention image K/V left out (they are per sequence, not per token;
/// [`kv_sequence_bytes`] adds them).
pub fn kv_bytes_per_token(w: &Workload) -> f64 {
    let ctx = w.context.max(1) as f64;
    (kv_sequence_bytes(w, ctx) - fixed_state(w)) / ctx
}

/// KV bytes per token as vLLM counts its "GPU KV cache size": every attention layer
/// as if it kept all tokens. Its hybrid allocator gives windowed layers the same blocks
/// as full ones (vllm/v1/core/kv_cache_utils.py), so a gpt-oss log prints 2,640,144
/// tokens for 4 × 45.32 GiB, 36 layers × 2,048 B each (dennislee22/vLLM-benchmarking,
/// gpt-oss-120b on 4 × A100).
pub fn kv_bytes_per_token_all_layers(w: &Workload) -> f64 {
    let a = &w.arch;
    let l = &a.layout;
    let attention = (a.layers - l.linear_layers - l.cross_layers).max(0.0);
    attention * per_layer_token(w) * a.kv_copies
}

/// Whether every tensor-parallel card holds the whole KV cache (MLA's single latent
/// head), rather than its share of the KV heads.
pub fn kv_whole_on_every_card(w: &Workload) -> bool {
    w.arch.kv_form == KvForm::Mla
}

#[cfg(test)]
mod tests;
