//! Training memory: LoRA/QLoRA adapters with AdamW state, full training at 16 bytes per
//! parameter (ZeRO paper §3.1), activations under gradient checkpointing and the loss's
//! logits (DOMAIN.md §5, §7). Formulas only.

use super::memory::{dequant_workspace, eager_scores, weight_bytes, NF4_BITS};
use super::{Bill, Split, GB};
use crate::advisor::workload::{LoraTargets, Precision, Task, Workload};

/// LoRA rank on every linear layer. Recipes differ (LLaMA-Factory's default is 8, Qwen's
/// published recipe 64); 24 is the single rank that fits both measured tables best.
pub const LORA_RANK: f64 = 24.0;
/// Bytes per trainable parameter with mixed-precision AdamW: FP32 master 4, gradient 4
/// and two moments 8 (adapters), or for full training 2 weight, 2 gradient and 12
/// optimizer (FP32 master and moments): DOMAIN.md §5, ZeRO paper §3.1.
const ADAPTER_BYTES: f64 = 16.0;
const FULL_WEIGHT_BYTES: f64 = 2.0;
const FULL_GRAD_BYTES: f64 = 2.0;
const FULL_OPT_BYTES: f64 = 12.0;
/// 8-bit Adam keeps the FP32 master (4) and two 8-bit moments (2) (bitsandbytes).
const OPT_8BIT_BYTES: f64 = 6.0;
/// FP32 logits and their gradient per token and vocabulary entry during training
/// (DOMAIN.md §7: ≈ 12); 4-bit recipes keep fewer FP32 copies (fitted: 8).
const TRAIN_LOGIT_BYTES: f64 = 12.0;
const QLORA_LOGIT_BYTES: f64 = 8.0;
/// Per token, one layer's recomputed activations under gradient checkpointing, in
/// hidden-size and intermediate-size BF16 tensors (fitted).
const RECOMPUTE_HIDDEN_TENSORS: f64 = 8.0;
const RECOMPUTE_INTER_TENSORS: f64 = 8.0;
/// Without activation checkpointing every layer keeps what its backward reads, per token:
/// the inputs of the norms, attention (Q, K, V, output and FlashAttention's softmax
/// statistics) and residuals as hidden-size tensors, and the SwiGLU MLP's gate, up,
/// activation and product as intermediate-size ones, 16-bit (Korthikanti et al. 2022,
/// "Reducing Activation Recomputation in Large Transformer Models", §4.1, for a SwiGLU
/// block; counts fitted over Lit-GPT's LoRA rows without checkpointing: 9 and 3).
const SAVED_HIDDEN_TENSORS: f64 = 9.0;
const SAVED_INTER_TENSORS: f64 = 3.0;
/// bitsandbytes' `MatMul4Bit`/`MatMul8bitLt` save their input for the backward
/// (`ctx.tensors = (A, B)` in bitsandbytes autograd/_functions.py) even with the weight
/// frozen, where a plain `nn.Linear` saves none: per layer the inputs of the attention
/// projections, of the output projection and of the MLP (hidden-size each) and of the down
/// projection (intermediate-size).
const QUANT_SAVED_HIDDEN_TENSORS: f64 = 3.0;
const QUANT_SAVED_INTER_TENSORS: f64 = 1.0;
/// Optimizer and framework buffers of a training process (DOMAIN.md §7: 1–2 GB; fitted).
const TRAINING_RUNTIME_GB: f64 = 2.0;

/// Adapter parameters of LoRA rank r on every linear of every layer:
/// r × (in + out) for q, k, v, o and the three MLP projections (LoRA paper §4).
/// A stated rank and targets replace the defaults.
pub fn lora_params(w: &Workload) -> f64 {
    let a = &w.arch;
    let q = a.heads * a.head_dim;
    let kv = a.kv_heads * a.head_dim;
    let per_layer = match w.recipe.lora_targets.unwrap_or(LoraTargets::AllLinear) {
        LoraTargets::AllLinear => {
            (a.hidden + q) * 2.0 + (a.hidden + kv) * 2.0 + 3.0 * (a.hidden + a.intermediate)
        }
        LoraTargets::Attention => (a.hidden + q) * 2.0 + (a.hidden + kv) * 2.0,
        LoraTargets::QueryValue => (a.hidden + q) + (a.hidden + kv),
    };
    let rank = w.recipe.lora_rank.map_or(LORA_RANK, f64::from);
    rank * per_layer * a.layers
}

/// ZeRO-3 unless the question names another stage.
fn split(w: &Workload) -> Split {
    match w.recipe.zero_stage {
        Some(s) if s < 3 => Split::ZeroStage(s),
        _ => Split::Zero3,
    }
}

pub(super) fn training_bill(w: &Workload) -> Bill {
    let a = &w.arch;
    let seqs = w.micro_batch.unwrap_or(1) as f64;
    let seq = w.context as f64;
    let tokens = seq * seqs;
    let logits = if w.task == Task::Qlora {
        QLORA_LOGIT_BYTES
    } else {
        TRAIN_LOGIT_BYTES
    } * a.vocab;
    let quantized_base = w.task == Task::Qlora || w.precision == Precision::Int8;
    let (per_token, scores) = if w.recipe.checkpointing() {
        // Gradient checkpointing keeps each layer's input (2 bytes × hidden per token),
        // then recomputes one layer at a time; the loss holds FP32 logits and their
        // gradient.
        let per_token = 2.0 * a.hidden * a.layers
            + (RECOMPUTE_HIDDEN_TENSORS * a.hidden + RECOMPUTE_INTER_TENSORS * a.intermediate)
                * 2.0
            + logits;
        (per_token, eager_scores(w, seqs, seq))
    } else {
        // Without it every layer keeps its saved tensors (and eager attention its
        // probabilities, one layer's scores per layer).
        let mut per_layer =
            (SAVED_HIDDEN_TENSORS * a.hidden + SAVED_INTER_TENSORS * a.intermediate) * 2.0;
        if quantized_base && matches!(w.task, Task::Lora | Task::Qlora) {
            per_layer += (QUANT_SAVED_HIDDEN_TENSORS * a.hidden
                + QUANT_SAVED_INTER_TENSORS * a.intermediate)
                * 2.0;
        }
        (
            per_layer * a.layers + logits,
            eager_scores(w, seqs, seq) * a.layers,
        )
    };
    let act = (tokens * per_token + scores) / GB;
    match w.task {
        Task::Lora | Task::Qlora => {
            let adapters = lora_params(w);
            let base = match (w.task, w.precision) {
                (Task::Qlora, _) => weight_bytes(w, Precision::Int4, Some(NF4_BITS)),
                (_, Precision::Int8) => weight_bytes(w, Precision::Int8, None),
                _ => weight_bytes(w, Precision::Bf16, None),
            };
            // Adapters: FP32 weight 4 + gradient 4 + AdamW moments 8 = 16 bytes each.
            let adapter_opt = if w.offload { 0.0 } else { ADAPTER_BYTES - 8.0 };
            let workspace = if quantized_base {
                dequant_workspace(w, w.precision) / GB
            } else {
                0.0
            };
            Bill {
                weights: (base + adapters * 4.0) / GB,
                kv_cache: 0.0,
                act_split: 0.0,
                act_full: act + workspace + TRAINING_RUNTIME_GB,
                gradients: adapters * 4.0 / GB,
                optimizer: adapters * adapter_opt / GB,
                reserve: 0.0,
                split: split(w),
                kv_whole: false,
            }
        }
        _ => {
            let n = a.params_b * 1e9;
            let weight_bytes = if w.precision == Precision::Fp32 {
                4.0
            } else {
                FULL_WEIGHT_BYTES
            };
            // CPU offload moves the FP32 master and moments to host memory (ZeRO-Offload).
            let opt = if w.offload {
                0.0
            } else if w.optimizer_8bit {
                OPT_8BIT_BYTES
            } else {
                FULL_OPT_BYTES
            };
            Bill {
                weights: n * weight_bytes / GB,
                kv_cache: 0.0,
                act_split: 0.0,
                act_full: act + TRAINING_RUNTIME_GB,
                gradients: n * FULL_GRAD_BYTES / GB,
                optimizer: n * opt / GB,
                reserve: 0.0,
                split: split(w),
                kv_whole: false,
            }
        }
    }
}
