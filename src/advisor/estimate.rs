//! The memory estimator: GPU memory a workload needs, part by part, from the model's
//! architecture (DOMAIN.md §7), and what that becomes per card when the job is split.
//!
//! GB are 10^9 bytes. Every constant says where it comes from; the global constants
//! marked "fitted" were set once against the whole published table in
//! `shared/measured.jsonl` (see BENCHMARKS.md), never per model.
//!
//! `memory` prices weights and inference activations, `kv` the KV cache, `training`
//! adapters, optimizer state and checkpointed activations, `speed` training hours and
//! decode rate. This module holds the bill and how it splits over cards; it chooses no
//! precision and no card (`recommend` does).

mod kv;
mod memory;
pub mod serving;
mod speed;
mod training;

pub use kv::{kv_bytes_per_token, kv_sequence_bytes, kv_whole_on_every_card};
pub use serving::{serving, Serving};
pub use speed::{decode_tokens_per_s, train_hours, DECODE_MBU, TRAINING_MFU};
pub use training::{lora_params, LORA_RANK};

use super::workload::{Attention, Logits, Precision, Task, Workload};

const GB: f64 = 1e9;

/// CUDA context and driver memory per GPU with lazy module loading (CUDA ≥ 11.7):
/// what nvidia-smi shows for an idle PyTorch process on A100/H100, which
/// `torch.cuda.max_memory_allocated` does not see.
pub const CUDA_CONTEXT_GB: f64 = 0.5;

/// The caching allocator's reserve: PyTorch's allocator keeps freed blocks in its pool
/// (c10/cuda/CUDACachingAllocator.cpp: blocks return to the pool, not to the driver,
/// until `empty_cache`), so tensors freed before the peak — eager attention scores and
/// the prompt's logits, each sized unlike anything allocated after them — stay reserved
/// while the cache grows in new segments. This fraction of those transients is what
/// `max_memory_reserved` (and nvidia-smi) shows above `max_memory_allocated` (fitted over
/// the DeepSeek-LLM and optimum rows of measured-2.jsonl).
pub const ALLOCATOR_RESERVE: f64 = 0.25;

/// How a job is split over several cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Tensor parallel inference: weights, KV cache and the MLP/attention
    /// intermediates divide; hidden states and runtime stay on every card.
    Tensor,
    /// ZeRO-3 training: weights, gradients and optimizer state divide; each card holds
    /// its own micro-batch's activations.
    Zero3,
    /// ZeRO stage 0–2 when the question names it (ZeRO paper §5: stage 1 partitions the
    /// optimizer state, stage 2 the gradients too; stage 0 is plain data parallelism).
    ZeroStage(u8),
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
    /// The allocator's reserve above its allocated peak (reserved − allocated).
    pub reserve: f64,
    pub split: Split,
    /// Every card holds the whole KV cache under tensor parallelism (MLA).
    pub kv_whole: bool,
}

impl Bill {
    /// Activations as CONTRACT.md reports them (allocator slack and workspaces included).
    pub fn activations(&self) -> f64 {
        self.act_split + self.act_full
    }
    /// The job's need on one card, without the CUDA context (the allocator's reserve
    /// included: a job runs out of memory when its reserved pool cannot grow).
    pub fn framework_total(&self) -> f64 {
        self.weights
            + self.kv_cache
            + self.activations()
            + self.gradients
            + self.optimizer
            + self.reserve
    }
    /// What each of `n` cards needs, CUDA context included (DOMAIN.md §6).
    pub fn per_card(&self, n: u32) -> f64 {
        let n = n.max(1) as f64;
        let (kv_split, kv_full) = if self.kv_whole {
            (0.0, self.kv_cache)
        } else {
            (self.kv_cache, 0.0)
        };
        let shared = self.weights + kv_split + self.gradients + self.optimizer;
        match self.split {
            Split::Tensor => {
                (shared + self.act_split + self.reserve) / n
                    + self.act_full
                    + kv_full
                    + CUDA_CONTEXT_GB
            }
            Split::Zero3 => {
                shared / n + kv_full + self.activations() + self.reserve + CUDA_CONTEXT_GB
            }
            Split::ZeroStage(stage) => {
                let divided = |part: f64, from: u8| if stage >= from { part / n } else { part };
                self.weights
                    + self.kv_cache
                    + divided(self.gradients, 2)
                    + divided(self.optimizer, 1)
                    + self.activations()
                    + self.reserve
                    + CUDA_CONTEXT_GB
            }
        }
    }
}

/// The memory bill of `w` run at precision `p` (which differs from `w.precision` after a
/// step-down).
pub fn bill(w: &Workload, p: Precision) -> Bill {
    let a = &w.arch;
    if a.diffusion {
        return diffusion_bill(w, p);
    }
    match w.task {
        Task::Inference => memory::inference_bill(w, p),
        Task::Lora | Task::Qlora | Task::Full | Task::Pretrain => training::training_bill(w),
    }
}

/// Diffusion: the denoising transformer at `p`, the VAE, and the activations of one
/// 1024² image (or one 480P clip) with its VAE decode (catalog figure per model). When
/// the catalog names the text encoders, they run first and are then moved to the CPU
/// (diffusers `enable_model_cpu_offload()`, the mode the FLUX.1 and Wan2.1 model cards
/// use), so the peak is the larger of the two phases; otherwise all stays resident.
fn diffusion_bill(w: &Workload, p: Precision) -> Bill {
    let a = &w.arch;
    let l = &a.layout;
    let all = memory::weight_bytes(w, p, None) / GB;
    // The text encoders' share of `all`, at the bits `memory::weight_bytes` gave them.
    let encoders = l.text_encoder_b * memory::diffusion_encoder_bits(p) / 8.0;
    let denoise = all - encoders;
    let weights = if encoders > 0.0 {
        denoise.max(encoders - a.diffusion_activation_gb)
    } else {
        all
    };
    Bill {
        weights,
        kv_cache: 0.0,
        act_split: 0.0,
        act_full: a.diffusion_activation_gb,
        gradients: 0.0,
        optimizer: 0.0,
        reserve: 0.0,
        split: Split::Tensor,
        kv_whole: false,
    }
}

/// Whether a diffusion model's text encoders are offloaded between uses in its bill.
pub fn diffusion_offloads_encoders(w: &Workload) -> bool {
    w.arch.diffusion && w.arch.layout.text_encoder_b > 0.0
}

/// A recipe the customer may run instead of the one assumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Eager attention instead of FlashAttention/SDPA.
    Eager,
    /// Logits for the whole prompt instead of the last token.
    FullLogits,
    /// Training without activation checkpointing.
    NoCheckpointing,
    /// FlashAttention/SDPA instead of eager attention.
    Flash,
    /// Training with activation checkpointing.
    Checkpointing,
}

/// What each plausible other recipe adds to (or, negative, takes from) the job's need on
/// one card, GB: the bill computed again with that recipe.
pub fn variants(w: &Workload, p: Precision) -> Vec<(Variant, f64)> {
    if w.arch.diffusion {
        return Vec::new();
    }
    let base = bill(w, p).framework_total();
    let mut out = Vec::new();
    let mut with = |v: Variant, f: &dyn Fn(&mut Workload)| {
        let mut o = w.clone();
        f(&mut o);
        if o.recipe != w.recipe {
            out.push((v, bill(&o, p).framework_total() - base));
        }
    };
    if w.recipe.attention() != Attention::Eager {
        with(Variant::Eager, &|o| {
            o.recipe.attention = Some(Attention::Eager)
        });
    } else {
        with(Variant::Flash, &|o| {
            o.recipe.attention = Some(Attention::Flash)
        });
    }
    if w.task.is_training() {
        if w.recipe.checkpointing() {
            with(Variant::NoCheckpointing, &|o| {
                o.recipe.checkpointing = Some(false)
            });
        } else {
            with(Variant::Checkpointing, &|o| {
                o.recipe.checkpointing = Some(true)
            });
        }
    } else if w.recipe.logits() == Logits::Last {
        with(Variant::FullLogits, &|o| {
            o.recipe.logits = Some(Logits::Full)
        });
    }
    out
}

#[cfg(test)]
mod tests;
