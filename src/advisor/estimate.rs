//! The memory estimator: GPU memory a workload needs, part by part, from the model's
//! architecture (DOMAIN.md §7), and what that becomes per card when the job is split.
//!
//! GB are 10^9 bytes. Every constant says where it comes from; the global constants
//! marked "fitted" were set once against the whole published table in
//! `shared/measured.jsonl` (see BENCHMARKS.md), never per model.

use super::catalog::{Gpu, KvForm};
use super::workload::{Precision, Task, Workload};

const GB: f64 = 1e9;

/// CUDA context and driver memory per GPU with lazy module loading (CUDA ≥ 11.7):
/// what nvidia-smi shows for an idle PyTorch process on A100/H100, which
/// `torch.cuda.max_memory_allocated` does not see.
pub const CUDA_CONTEXT_GB: f64 = 0.5;
/// GPTQ/AWQ group-wise quantization with group size 128: 4 (8) bits per weight plus a
/// 16-bit scale and a packed zero per group ≈ 4.16 (8.2) bits (DOMAIN.md §7).
const INT4_BITS: f64 = 4.16;
const INT8_BITS: f64 = 8.2;
/// bitsandbytes NF4 with double quantization: 4 + 0.127 bits (QLoRA paper, §3).
const NF4_BITS: f64 = 4.127;
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
/// Optimizer and framework buffers of a training process (DOMAIN.md §7: 1–2 GB; fitted).
const TRAINING_RUNTIME_GB: f64 = 2.0;

/// How a job is split over several cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Tensor parallel inference: weights, KV cache and the MLP/attention
    /// intermediates divide; hidden states and runtime stay on every card.
    Tensor,
    /// ZeRO-3 training: weights, gradients and optimizer state divide; each card holds
    /// its own micro-batch's activations.
    Zero3,
}

/// The memory bill of one workload, before any split.
#[derive(Debug, Clone, PartialEq)]
pub struct Bill {
    pub weights: f64,
    pub kv_cache: f64,
    /// Activations that divide under tensor parallelism.
    pub act_split: f64,
    /// Activations and runtime buffers every card holds in full.
    pub act_full: f64,
    pub gradients: f64,
    pub optimizer: f64,
    pub split: Split,
}

impl Bill {
    /// Activations as CONTRACT.md reports them (allocator slack and workspaces included).
    pub fn activations(&self) -> f64 {
        self.act_split + self.act_full
    }
    /// The job's need on one card, without the CUDA context.
    pub fn framework_total(&self) -> f64 {
        self.weights + self.kv_cache + self.activations() + self.gradients + self.optimizer
    }
    /// What each of `n` cards needs, CUDA context included (DOMAIN.md §6).
    pub fn per_card(&self, n: u32) -> f64 {
        let n = n.max(1) as f64;
        let shared = self.weights + self.kv_cache + self.gradients + self.optimizer;
        match self.split {
            Split::Tensor => (shared + self.act_split) / n + self.act_full + CUDA_CONTEXT_GB,
            Split::Zero3 => shared / n + self.activations() + CUDA_CONTEXT_GB,
        }
    }
}

fn bits_for(p: Precision) -> f64 {
    match p {
        Precision::Fp32 => 32.0,
        Precision::Bf16 | Precision::Fp16 => 16.0,
        Precision::Fp8 => FP8_BITS,
        Precision::Int8 => INT8_BITS,
        Precision::Int4 => INT4_BITS,
    }
}

/// Weight memory: block linears at the format's bits, embeddings and lm_head 16-bit
/// (DOMAIN.md §7); MoE keeps every expert resident, so total parameters count.
fn weight_bytes(w: &Workload, p: Precision, bits_override: Option<f64>) -> f64 {
    let a = &w.arch;
    let total = a.params_b * 1e9;
    let bits = bits_override.unwrap_or_else(|| bits_for(p));
    if bits >= 16.0 {
        return total * bits / 8.0;
    }
    let emb = a.embedding_params();
    (total - emb) * bits / 8.0 + emb * 2.0
}

/// KV cache bytes per token: 2 (K and V) × layers × KV heads × head dim × bytes
/// (GQA/MQA/MHA), or layers × latent width × bytes for MLA (DeepSeek-V2 paper §2.1).
pub fn kv_bytes_per_token(w: &Workload) -> f64 {
    let a = &w.arch;
    let bytes = if w.kv_8bit { 1.0 } else { 2.0 };
    let per = match a.kv_form {
        KvForm::Mla => a.layers * a.kv_latent_dim * bytes,
        _ => 2.0 * a.layers * a.kv_heads * a.head_dim * bytes,
    };
    per * a.kv_copies
}

/// Dequantization workspace of quantized kernels: about one large linear in FP16.
fn dequant_workspace(w: &Workload, p: Precision) -> f64 {
    if p.is_quantized() {
        w.arch.hidden * w.arch.intermediate * 2.0
    } else {
        0.0
    }
}

/// Adapter parameters of LoRA rank r on every linear of every layer:
/// r × (in + out) for q, k, v, o and the three MLP projections (LoRA paper §4).
pub fn lora_params(w: &Workload) -> f64 {
    let a = &w.arch;
    let q = a.heads * a.head_dim;
    let kv = a.kv_heads * a.head_dim;
    let per_layer =
        (a.hidden + q) * 2.0 + (a.hidden + kv) * 2.0 + 3.0 * (a.hidden + a.intermediate);
    LORA_RANK * per_layer * a.layers
}

/// The memory bill of `w` run at precision `p` (which differs from `w.precision` after a
/// step-down).
pub fn bill(w: &Workload, p: Precision) -> Bill {
    let a = &w.arch;
    if a.diffusion {
        // Diffusion: all pipeline weights resident plus the denoiser's activations and the
        // VAE decode at 1024² (catalog figure per model).
        return Bill {
            weights: weight_bytes(w, p, None) / GB,
            kv_cache: 0.0,
            act_split: 0.0,
            act_full: a.diffusion_activation_gb,
            gradients: 0.0,
            optimizer: 0.0,
            split: Split::Tensor,
        };
    }
    match w.task {
        Task::Inference => {
            let ctx = w.context as f64;
            let conc = w.concurrency as f64;
            let kv = kv_bytes_per_token(w) * ctx * conc;
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
            }
        }
        Task::Lora | Task::Qlora | Task::Full | Task::Pretrain => training_bill(w),
    }
}

fn training_bill(w: &Workload) -> Bill {
    let a = &w.arch;
    let tokens = w.context as f64 * w.micro_batch.unwrap_or(1) as f64;
    // Gradient checkpointing keeps each layer's input (2 bytes × hidden per token), then
    // recomputes one layer at a time; the loss holds FP32 logits and their gradient.
    let per_token = 2.0 * a.hidden * a.layers
        + (RECOMPUTE_HIDDEN_TENSORS * a.hidden + RECOMPUTE_INTER_TENSORS * a.intermediate) * 2.0
        + if w.task == Task::Qlora {
            QLORA_LOGIT_BYTES
        } else {
            TRAIN_LOGIT_BYTES
        } * a.vocab;
    let act = tokens * per_token / GB;
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
            Bill {
                weights: (base + adapters * 4.0) / GB,
                kv_cache: 0.0,
                act_split: 0.0,
                act_full: act + TRAINING_RUNTIME_GB,
                gradients: adapters * 4.0 / GB,
                optimizer: adapters * adapter_opt / GB,
                split: Split::Zero3,
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
                split: Split::Zero3,
            }
        }
    }
}

/// Model FLOPs utilisation assumed for training time (DOMAIN.md §5: 8× A100 at 40 %).
pub const TRAINING_MFU: f64 = 0.40;
/// Share of peak memory bandwidth a decode step achieves (memory-bandwidth utilisation
/// of 60 % is typical of optimised engines: Databricks, "LLM Inference Performance
/// Engineering", 2023).
pub const DECODE_MBU: f64 = 0.60;

/// Training hours: 6 × active params × tokens FLOPs (Kaplan et al. 2020, §2.1) over
/// cards × dense BF16 peak × MFU.
pub fn train_hours(w: &Workload, gpu: &Gpu, cards: u32) -> Option<f64> {
    let tokens = w.train_tokens?;
    let flops = 6.0 * w.arch.active_params_b * 1e9 * tokens;
    let rate = cards.max(1) as f64 * gpu.fp16_tflops * 1e12 * TRAINING_MFU;
    Some(flops / rate / 3600.0)
}

/// Single-stream decode tokens/s: every token reads the (active) weights and the
/// sequence's KV cache once, at DECODE_MBU of the cards' combined bandwidth (roofline).
pub fn decode_tokens_per_s(
    w: &Workload,
    b: &Bill,
    p: Precision,
    gpu: &Gpu,
    cards: u32,
) -> Option<f64> {
    if w.task.is_training() || w.arch.diffusion {
        return None;
    }
    let active_share = w.arch.active_params_b / w.arch.params_b;
    let bytes =
        weight_bytes(w, p, None) * active_share + b.kv_cache * GB / w.concurrency.max(1) as f64;
    let bw = gpu.bandwidth_gbs * 1e9 * cards.max(1) as f64 * DECODE_MBU;
    (bytes > 0.0).then(|| bw / bytes)
}
