//! Speed: training hours from the FLOPs of the job and decode tokens per second from the
//! bytes each token reads (roofline). Formulas only, with their sources.

use super::memory::weight_bytes;
use super::{Bill, GB};
use crate::advisor::catalog::Gpu;
use crate::advisor::workload::{Precision, Workload};

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
