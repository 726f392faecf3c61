//! Speed: training hours from the FLOPs of the job and decode tokens per second from the
//! bytes each token reads (roofline). Formulas only, with their sources.

use super::memory::weight_bytes;
use super::serving::kv_per_card;
use super::Bill;
use crate::advisor::catalog::{Gpu, Model};
use crate::advisor::workload::{Engine, Precision, Workload};

/// Model FLOPs utilisation assumed for training time (DOMAIN.md §5: 8× A100 at 40 %).
pub const TRAINING_MFU: f64 = 0.40;
/// Share of peak memory bandwidth a vLLM decode step achieves once its fixed costs are
/// counted apart (DOMAIN.md §8 says 0.6–0.7 of bandwidth all included; fitted on the
/// Qwen2.5 vLLM speed table, 0.5B to 14B and AWQ on A100: 0.83, with 0.2 ms per step and
/// 0.11 ms per layer, every row within 7 %).
pub const DECODE_MBU: f64 = 0.83;

/// Training hours: 6 × active params × tokens FLOPs (Kaplan et al. 2020, §2.1) over
/// cards × dense BF16 peak × MFU.
pub fn train_hours(w: &Workload, gpu: &Gpu, cards: u32) -> Option<f64> {
    let tokens = w.train_tokens?;
    let flops = 6.0 * w.arch.active_params_b * 1e9 * tokens;
    let rate = cards.max(1) as f64 * gpu.fp16_tflops * 1e12 * TRAINING_MFU;
    Some(flops / rate / 3600.0)
}

/// How each engine decodes: the share of peak bandwidth its kernels reach, the fixed
/// cost of one step (scheduling, sampling) and the cost per layer of launching its
/// kernels, in seconds. Fitted once on `shared/serving.jsonl` (BENCHMARKS.md): vLLM on
/// the Qwen2.5 A100 table, SGLang on the Qwen3 H20 table, TensorRT-LLM (fused kernels,
/// fewer launches) on NVIDIA's NIM table (ITL at concurrency 1). HF transformers
/// launches every layer's kernels from Python: a step costs the larger of reading the
/// weights (0.62 of bandwidth, fitted on the rows where reading sets the pace:
/// Qwen2.5-32B and -72B, first Qwen-72B) and `HF_LAYER_S` per layer. A step reads the
/// output head but not the embedding table, of which it looks up one row per sequence.
/// llama.cpp's batch-1 kernels read about 0.9 of a card's bandwidth but no more than
/// `GGUF_BW_CAP_GBS` on any card: XiongjieDai/GPU-Benchmarks-on-LLM-Inference (llama-bench
/// tg1024, Llama-3-8B and 70B, Q4_K_M and F16; bytes read ÷ time left after the fixed
/// costs): RTX 4090 0.87–0.94, RTX 3090 0.77, L40S 0.86, A100 80GB 0.45–0.55 of peak, i.e.
/// 0.9–1.1 TB/s, as llama.cpp discussion #4167 has an H100 barely faster than a 4090.
fn engine_speed(e: Engine) -> (f64, f64, f64) {
    match e {
        Engine::Vllm => (DECODE_MBU, 0.2e-3, 0.11e-3),
        Engine::Sglang => (DECODE_MBU, 1.5e-3, 0.11e-3),
        Engine::TrtLlm => (0.85, 0.3e-3, 0.035e-3),
        Engine::Transformers => (0.62, 0.0, 0.0),
        Engine::LlamaCpp | Engine::Ollama => (0.90, 1.0e-3, 0.05e-3),
    }
}
/// Routed experts per MoE layer and experts per token when only the sizes are known: the
/// layout of Qwen3-30B-A3B, Qwen3-235B-A22B and GLM-4.5 (config.json `num_experts` 128,
/// `num_experts_per_tok` 8).
const GENERIC_EXPERTS: f64 = 128.0;
const GENERIC_EXPERTS_PER_TOKEN: f64 = 8.0;
/// The bandwidth llama.cpp's decode kernels reach at most on one card, GB/s (above).
const GGUF_BW_CAP_GBS: f64 = 1000.0;
/// HF transformers' Python cost per decoder layer and step, each constant across model
/// sizes: 0.88 ms on the Qwen2.5 A100 table and 0.77 on the first Qwen's (A100 too), 0.61
/// on the Qwen3 H20 table. The cost is the host's (the Python loop and kernel launches),
/// and machines are built around one GPU generation: before Ada/Hopper the geometric
/// mean of the two A100 tables, 0.82 ms; from Ada/Hopper on the H20's, 0.61 ms.
pub const HF_LAYER_S: f64 = 0.82e-3;
pub const HF_LAYER_NEW_HOST_S: f64 = 0.61e-3;

/// The per-layer Python cost of HF transformers on a machine built around `arch`.
pub fn hf_layer_s(arch: &str) -> f64 {
    match arch {
        "Volta" | "Turing" | "Ampere" => HF_LAYER_S,
        _ => HF_LAYER_NEW_HOST_S,
    }
}
/// HF transformers' attention over a grouped-query KV cache in a decode step runs at this
/// share of peak bandwidth, counted on the cache expanded to every query head (`repeat_kv`
/// in the Llama/Qwen2 modeling code copies each KV head to the query heads of its group
/// before attention; a multi-head cache is read as it is, as the first Qwen's 7B–72B
/// table shows): fitted on the Qwen2.5 speed table (transformers 4.46, A100 80G, 0.5B–72B
/// BF16 at inputs of 1 to 30,720 tokens; 7B falls from 40.4 to 18.8 tokens/s, 72B from
/// 8.7 to 2.9, 0.5B stays at 47 because its Python loop still sets the pace) and
/// GLM-4-9B's streamed decode at 32k (THUDM/GLM-4 basic_demo, A100: 14.4 tokens/s).
pub const HF_ATTENTION_BW: f64 = 0.16;
/// Without CUDA graphs (`--enforce-eager`) every layer's kernels are launched from the
/// host: Qwen2.5-32B eager on A100 runs 2.5 ms per step slower than the graph-captured
/// fit predicts, 40 µs per layer.
pub const EAGER_LAYER_S: f64 = 40e-6;
/// One all-reduce of a decode step's activations: latency per call and the link's
/// bandwidth. Tensor parallelism runs two per layer (Megatron-LM, Shoeybi et al. 2019,
/// §3). NVLink: fitted, 15 µs (Qwen2.5-72B TP4 and AWQ TP2 on A100, Llama-3.3-70B TP2 on
/// H100); PCIe: NCCL's small-message all-reduce latency over PCIe 4.0 (nccl-tests,
/// ≈ 100 µs) at 25 GB/s; across machines (beyond the 8 cards of one): 200 Gb/s
/// InfiniBand/RoCE, 150 µs at 25 GB/s.
const AR_NVLINK_S: f64 = 15e-6;
const AR_PCIE_S: f64 = 100e-6;
const AR_NODE_S: f64 = 150e-6;
const PCIE_GBS: f64 = 25.0;
const NODE_GBS: f64 = 25.0;
/// Model FLOPs utilisation of prefill (compute-bound GEMMs) at 16-bit, fitted on the
/// TensorRT-LLM 0.13 A100 max-throughput table (2048 in / 128 out): 0.70; FP8 GEMMs reach
/// a smaller share of their doubled peak (NIM Llama-3.3-70B FP8 TTFT on 2 × H100): 0.70 of
/// that again.
pub const PREFILL_MFU: f64 = 0.70;
const FP8_EFFICIENCY: f64 = 0.70;
/// Utilisation of a large decode batch when it turns compute-bound.
const DECODE_MFU: f64 = 0.60;
/// What a request pays before its prefill: tokenising, the HTTP round trip, scheduling
/// (NIM's TTFT at concurrency 1 less its prefill time, about 30 ms).
const REQUEST_OVERHEAD_S: f64 = 0.03;

/// One replica: a model on `tp` cards of `gpu` under an engine.
pub struct Replica<'a> {
    pub w: &'a Workload,
    pub model: Option<&'a Model>,
    pub engine: Engine,
    pub gpu: &'a Gpu,
    pub p: Precision,
    pub tp: u32,
    pub linked: bool,
    pub weight_bytes: f64,
    pub kv_per_card: f64,
    pub eager: bool,
}

/// TTFT, each user's decode speed and the replica's output throughput at one load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    pub ttft_s: f64,
    pub per_user: f64,
    pub throughput: f64,
}

impl Replica<'_> {
    /// Engines that split layers over cards and run them one after another (HF
    /// `device_map`, llama.cpp's default layer split) instead of tensor parallelism.
    fn sequential(&self) -> bool {
        matches!(
            self.engine,
            Engine::Transformers | Engine::LlamaCpp | Engine::Ollama
        )
    }

    /// Dense peak FLOP/s of one card at this precision and the share prefill reaches.
    fn prefill_rate(&self) -> f64 {
        let g = self.gpu;
        if self.p == Precision::Fp8 && g.fp8() {
            g.fp8_tflops * 1e12 * PREFILL_MFU * FP8_EFFICIENCY
        } else {
            g.fp16_tflops * 1e12 * PREFILL_MFU
        }
    }

    fn compute_cards(&self) -> f64 {
        if self.sequential() {
            1.0
        } else {
            self.tp as f64
        }
    }

    /// Share of the weights one decode step over `b` sequences reads: a dense model
    /// all of them; a MoE its shared part and the experts the batch routes to (each
    /// token picks k of E, so a batch touches E × (1 − (1 − k/E)^b) of them). A MoE known
    /// only by its sizes ("30B-A3B") routes as the common layout does.
    fn weight_share(&self, b: f64) -> f64 {
        let a = &self.w.arch;
        let active = a.active_params_b / a.params_b;
        let (e, k) = match self.model {
            Some(m) if m.experts > m.experts_per_token && m.experts_per_token > 0 => {
                (m.experts as f64, m.experts_per_token as f64)
            }
            None if active < 1.0 => (GENERIC_EXPERTS, GENERIC_EXPERTS_PER_TOKEN),
            _ => return active,
        };
        let per_expert = (a.params_b - a.active_params_b) / (e - k);
        let shared = (a.params_b - e * per_expert).max(0.0);
        let touched = e * (1.0 - (1.0 - k / e).powf(b.max(1.0)));
        ((shared + touched * per_expert) / a.params_b).clamp(active, 1.0)
    }

    /// Weight bytes a decode step reads: all but the input embedding table when the
    /// output head is a matrix of its own (a step looks up one row of the table; a tied
    /// table is read whole as the head). The table is 16-bit beside quantized blocks
    /// (`memory::weight_bytes`), quantized alike in GGUF, 32-bit in FP32.
    fn read_bytes(&self) -> f64 {
        let a = &self.w.arch;
        if a.tied || a.diffusion || a.params_b <= 0.0 {
            return self.weight_bytes;
        }
        let per_param = if self.engine.gguf() {
            self.weight_bytes / (a.params_b * 1e9)
        } else if self.p == Precision::Fp32 {
            4.0
        } else {
            2.0
        };
        (self.weight_bytes - a.vocab * a.hidden * per_param).max(0.5 * self.weight_bytes)
    }

    /// Seconds of two all-reduces per layer over `tokens` tokens' activations.
    fn all_reduce_s(&self, tokens: f64) -> f64 {
        if self.tp <= 1 || self.sequential() {
            return 0.0;
        }
        let (lat, gbs) = if self.tp > 8 {
            (AR_NODE_S, NODE_GBS)
        } else if self.linked {
            (AR_NVLINK_S, self.gpu.link_gbs.max(PCIE_GBS))
        } else {
            (AR_PCIE_S, PCIE_GBS)
        };
        let tp = self.tp as f64;
        let bytes = tokens * self.w.arch.hidden * 2.0 * 2.0 * (tp - 1.0) / tp;
        2.0 * self.w.arch.layers * (lat + bytes / (gbs * 1e9))
    }

    /// Seconds of one decode step over `b` sequences of `ctx` tokens each.
    pub fn step_s(&self, b: f64, ctx: f64) -> f64 {
        let (mbu, fixed, per_layer) = engine_speed(self.engine);
        let a = &self.w.arch;
        let weights = self.read_bytes() * self.weight_share(b);
        let kv = b * ctx * self.kv_per_card * self.tp as f64;
        let mut bw = self.gpu.bandwidth_gbs * 1e9 * mbu;
        if self.engine.gguf() {
            bw = bw.min(GGUF_BW_CAP_GBS * 1e9);
        }
        let group = a.heads / a.kv_heads.max(1.0);
        let memory = if self.engine == Engine::Transformers && group > 1.0 {
            weights / bw + kv * group / (self.gpu.bandwidth_gbs * 1e9 * HF_ATTENTION_BW)
        } else if self.sequential() {
            (weights + kv) / bw
        } else {
            (weights + kv) / (bw * self.tp as f64)
        };
        let flops =
            b * (2.0 * a.active_params_b * 1e9 + 4.0 * a.layers * ctx * a.heads * a.head_dim);
        let compute =
            flops / (self.compute_cards() * self.prefill_rate() / PREFILL_MFU * DECODE_MFU);
        let mut t = memory.max(compute) + fixed + a.layers * per_layer + self.all_reduce_s(b);
        if self.engine == Engine::Transformers {
            t = t.max(a.layers * hf_layer_s(&self.gpu.arch));
        }
        if self.eager && !self.sequential() {
            t += a.layers * EAGER_LAYER_S;
        }
        t
    }

    /// Seconds of one request's prefill of `input` tokens (linear layers and causal
    /// attention, 2 FLOPs per multiply-add), without the request overhead.
    /// The embedding table is a lookup, not a matmul, and a prefill runs the output head
    /// on its last token only (vLLM's and the engines' logits of the last position), so
    /// those matrices count once per request, not per prompt token.
    pub fn prefill_compute_s(&self, input: u32) -> f64 {
        let a = &self.w.arch;
        let n = input as f64;
        let head = a.vocab * a.hidden;
        let tables = if a.tied { head } else { 2.0 * head };
        let per_token = (a.active_params_b * 1e9 - tables).max(0.5 * a.active_params_b * 1e9);
        let flops =
            2.0 * per_token * n + 2.0 * head + 2.0 * a.layers * n * n * a.heads * a.head_dim;
        flops / (self.compute_cards() * self.prefill_rate()) + self.all_reduce_s(n)
    }
}

/// Seconds from a request's arrival to its first token on an idle replica.
pub fn prefill_s(r: &Replica<'_>, input: u32) -> f64 {
    r.prefill_compute_s(input) + r.step_s(1.0, input as f64) + REQUEST_OVERHEAD_S
}

/// One stream alone: its `output` tokens at the request's mean depth (`input` + half the
/// `output`). When the question states its prompt (`prompted`), over the whole request,
/// the prompt's prefill included, as the model vendors' speed tables time one
/// `generate()` call for a given input length (Qwen2.5: 2048 tokens ÷ the call's wall
/// time; at 129,024 input tokens the prefill is a third of it); otherwise the decode rate
/// alone, as llama.cpp's `tg` and Ollama's eval rate count it.
pub fn single_stream(r: &Replica<'_>, input: u32, output: u32, prompted: bool) -> f64 {
    let (i, o) = (input as f64, output.max(1) as f64);
    let prefill = if prompted && input > 1 {
        r.prefill_compute_s(input)
    } else {
        0.0
    };
    o / (prefill + o * r.step_s(1.0, i + o / 2.0))
}

/// The replica at `c` concurrent requests (continuous batching): every step decodes all
/// of them and carries the prefills of those arriving, each request's prefill spread over
/// its `output` steps; a new request waits for the prefill share of the replica's time
/// (an M/D/1-like `1 / (1 − u)`) and half a step.
pub fn at_load(r: &Replica<'_>, input: u32, output: u32, c: f64) -> Load {
    let b = c.max(1.0);
    let (i, o) = (input as f64, output as f64);
    let step = r.step_s(b, i + o / 2.0);
    let prefill = r.prefill_compute_s(input);
    let share = (b - 1.0) / o * prefill;
    let eff = step + share;
    let u = (share / eff).min(0.95);
    let ttft = prefill / (1.0 - u) + step / 2.0 + REQUEST_OVERHEAD_S;
    Load {
        ttft_s: ttft,
        per_user: 1.0 / eff,
        throughput: b * o / (ttft + o * eff),
    }
}

/// Single-stream decode tokens/s on a configuration of `cards` cards, counting only the
/// cards the model is split over (the fewest, in powers of two, that hold its bill;
/// the others serve copies), with vLLM's efficiency and the cost of splitting.
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
    let mut tp = 1;
    while tp < cards.max(1) && b.per_card(tp) > gpu.memory_gb * 0.95 {
        tp *= 2;
    }
    let tp = tp.min(cards.max(1));
    let r = Replica {
        w,
        model: None,
        engine: Engine::Vllm,
        gpu,
        p,
        tp,
        linked: !gpu.link.is_empty(),
        weight_bytes: weight_bytes(w, p, None),
        kv_per_card: kv_per_card(w, tp, Engine::Vllm),
        eager: false,
    };
    let ctx = w.context.max(2);
    let out = super::serving::DEFAULT_OUTPUT_TOKENS.min(ctx / 2);
    Some(single_stream(&r, ctx - out, out, false))
}
