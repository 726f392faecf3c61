//! Serving: how a configuration behaves as a service (CONTRACT.md §2.1, DOMAIN.md §8).
//! Memory as the engine holds it (its reserves, then the KV cache in tokens), the
//! longest request and how many fit at once; speed from physics (`speed`), and the load
//! the configuration carries within the latency targets, hence the replicas.
//!
//! GiB here are 2^30 bytes, as the engines log them. The constants name their source;
//! those marked "fitted" were set once against `shared/serving.jsonl` (BENCHMARKS.md).

use super::kv::{kv_bytes_per_token, kv_bytes_per_token_all_layers, kv_whole_on_every_card};
use super::memory::weight_bytes;
use super::speed::{self, Replica};
use crate::advisor::catalog::{Gpu, Model};
use crate::advisor::workload::{
    Engine, Precision, ServingAsk, Workload, DEFAULT_INFERENCE_CONTEXT,
};

const GIB: f64 = 1_073_741_824.0;

/// Memory a process can allocate of a card's marketed size: torch reports 79.2 GiB of an
/// A100/H100 "80 GB", 39.6 of a "40 GB" A100 (`torch.cuda.mem_get_info` totals printed
/// in vLLM's start-up logs).
pub const CARD_USABLE: f64 = 0.99;
/// vLLM's default `gpu_memory_utilization` (vllm/config.py CacheConfig; DOMAIN.md §8).
/// CUDA graphs are captured after the KV cache is allocated, in the margin the
/// utilization leaves; V1 counts them in its profiling only with
/// `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1` (default 0, vllm/envs.py), so they take
/// nothing from the KV budget here.
pub const VLLM_UTILIZATION: f64 = 0.90;
/// Memory outside torch's allocator that vLLM's profiling counts against the budget
/// (cuBLAS workspaces, NCCL's own buffers): 21.22 − 17.06 − 3.81 GiB = 0.35 GiB on an
/// RTX 3090 (vLLM issue 10517's "Memory profiling results" at two max_model_len values).
pub const VLLM_NON_TORCH_GIB: f64 = 0.35;
/// Tensor-parallel communicators per card (NCCL buffers, vLLM's custom all-reduce IPC
/// buffers, SGLang's likewise): what SGLang leaves unexplained on 4 × H100 beyond the
/// weights and its `mem_fraction_static` (vLLM issue 21348's SGLang log), fitted: 1.2 GiB.
pub const TP_COMM_GIB: f64 = 1.2;
/// The CUDA context per process, which SGLang and TensorRT-LLM budget from free memory
/// (estimate::CUDA_CONTEXT_GB, 0.5 GB).
const CONTEXT_GIB: f64 = 0.5;
/// vLLM's V1 engine (the default since 0.8) profiles one scheduler step of
/// `max_num_batched_tokens` tokens, chunked prefill being always on: the API server's
/// default is 8192 on cards of at least 70 GiB other than A100, 2048 elsewhere
/// (vllm/engine/arg_utils.py `EngineArgs.get_batch_defaults`, `UsageContext.OPENAI_API_SERVER`).
pub const VLLM_V1_BATCH_TOKENS: u32 = 2048;
pub const VLLM_V1_BATCH_TOKENS_BIG: u32 = 8192;
/// The V0 engine (vLLM ≤ 0.7) profiles one batch of the whole `max_model_len` while
/// chunked prefill is off, which its engine arguments leave off up to 32K of context
/// (vllm/engine/arg_utils.py V0 `use_long_context`; from 0.5.4, vLLM PR #6666, before
/// which it was always off); above that, chunks of 512 tokens (V0's chunked-prefill
/// `max_num_batched_tokens`; vLLM issue 10517's 35K log: 0.06 GiB of activations over
/// the weights, 512 tokens of Llama-3.1-8B).
pub const VLLM_V0_UNCHUNKED_MAX: u32 = 32_768;
pub const VLLM_V0_CHUNK_TOKENS: u32 = 512;
/// The first release (0.5.4) that chunks the profiling of contexts above 32K.
pub const VLLM_V0_LONG_CHUNKING: f64 = 5.4;
/// vLLM's profiling samples `max_num_seqs` sequences at once (256 by default, 1024 on
/// ≥ 70 GiB cards other than A100: arg_utils.py `get_batch_defaults`); V1's dummy
/// sampler run holds the float32 logits, their log-softmax, the top-k/top-p sort (values
/// and int64 indices), its softmax, cumulative sum and scatter, and the exponential
/// noise of sampling: about this many logits-sized tensors at its peak
/// (vllm/v1/sample/sampler.py and ops/topk_topp_sampler.py, PyTorch-native path);
/// fitted: 10, on the 4 × H100 log of vLLM issue 21348, the one row where the sampler,
/// not the forward, sets the peak. V0's profiling computes the float32 logits of its
/// sequences once (vllm/model_executor/layers/logits_processor.py).
pub const SAMPLER_COPIES: f64 = 10.0;
const V0_SAMPLER_COPIES: f64 = 1.0;
/// Live activations per profiled token: the three intermediate-size tensors of a SwiGLU
/// MLP (gate and up, their product) and three hidden-size ones (residual, norm, attention
/// output), BF16: 110.6 KB per token for Llama-3.1-8B against the 0.92 GiB per 9000
/// tokens vLLM issue 10517 logs between max_model_len 20000 and 29000 (109.8 KB).
const ACT_INTERMEDIATE_TENSORS: f64 = 3.0;
const ACT_HIDDEN_TENSORS: f64 = 3.0;
/// SGLang's default `mem_fraction_static` by tensor-parallel size (python/sglang/srt/
/// server_args.py, 0.4.x: TP ≥ 8 0.79, ≥ 4 0.83, ≥ 2 0.87, else 0.88).
fn sglang_fraction(tp: u32) -> f64 {
    match tp {
        8.. => 0.79,
        4..=7 => 0.83,
        2..=3 => 0.87,
        _ => 0.88,
    }
}
/// TensorRT-LLM gives the KV cache this share of the memory free after the engine is
/// built (`KvCacheConfig.free_gpu_memory_fraction` default 0.9, TensorRT-LLM docs).
pub const TRT_KV_FRACTION: f64 = 0.90;
/// TensorRT-LLM's default `max_num_tokens` (activation buffers are sized for it).
const TRT_MAX_NUM_TOKENS: f64 = 8192.0;
/// llama.cpp's compute buffer for a 512-token batch (its "compute buffer size" log line
/// is a few hundred MiB for 7–8B models): 0.5 GiB.
const GGUF_COMPUTE_GIB: f64 = 0.5;
/// The context llama.cpp's server and Ollama start with when none is given (llama.cpp
/// `--ctx-size` 4096; Ollama `num_ctx` 4096 since 0.6.x).
pub const GGUF_DEFAULT_CTX: u32 = 4096;
/// Cards vLLM gives its larger batch defaults: at least 70 GiB and not an A100
/// (arg_utils.py `get_batch_defaults`, "Setting large `max_num_batched_tokens` for A100
/// reduces throughput", vLLM PR #17885).
fn big_card(gpu: &Gpu) -> bool {
    gpu.memory_gb >= 70.0 && !gpu.id.starts_with("a100")
}

/// The tokens of vLLM's profiling forward: V1 one scheduler step, V0 the whole context
/// up to 32K (always before 0.5.4), else one 512-token chunk; a step budget the question
/// sets (`--max-num-batched-tokens`) is the step either way.
fn vllm_profile_tokens(s: &ServingAsk, gpu: &Gpu, max_len: u32) -> u32 {
    if let Some(n) = s.max_num_batched_tokens {
        return n.max(1);
    }
    match s.vllm_release {
        Some(r) if r < crate::advisor::workload::serving::VLLM_V1_RELEASE => {
            let chunks = r == 0.0 || r >= VLLM_V0_LONG_CHUNKING;
            if max_len <= VLLM_V0_UNCHUNKED_MAX || !chunks {
                max_len.max(VLLM_V0_CHUNK_TOKENS)
            } else {
                VLLM_V0_CHUNK_TOKENS
            }
        }
        _ if big_card(gpu) => VLLM_V1_BATCH_TOKENS_BIG,
        _ => VLLM_V1_BATCH_TOKENS,
    }
}

/// The month vLLM made its V1 engine the default (v0.8.0, 2025-03-18, release notes:
/// "V1 is now enabled by default"); a model published by then may run on either engine.
pub const VLLM_V1_DEFAULT_MONTH: &str = "2025-03";
/// The last release whose default engine is V0 (0.7.3), standing for V0 when no release
/// is named.
const VLLM_LAST_V0: f64 = 7.3;

/// Whether the capacity must hold on V0 as well: vLLM with no release named, serving a
/// model published before V1 became the default (or one the catalog does not date).
fn either_vllm(engine: Engine, s: &ServingAsk, model: Option<&Model>) -> bool {
    engine == Engine::Vllm
        && s.vllm_release.is_none()
        && model.is_none_or(|m| m.released.as_str() <= VLLM_V1_DEFAULT_MONTH)
}

/// Sequences an engine batches at most: vLLM `max_num_seqs` 256 (1024 on H100-class
/// cards in V1: arg_utils.py), SGLang's `max_running_requests` likewise, TensorRT-LLM's
/// `max_batch_size` 2048 (trtllm-bench), HF generate a batch of 64, llama.cpp one slot
/// per `--parallel` (4 by default in llama-server).
fn max_batch(engine: Engine, gpu: &Gpu, s: &ServingAsk) -> f64 {
    if let Some(n) = s.max_num_seqs {
        return n.max(1) as f64;
    }
    match engine {
        Engine::Vllm if s.vllm_v0() => 256.0,
        Engine::Vllm | Engine::Sglang if big_card(gpu) => 1024.0,
        Engine::Vllm | Engine::Sglang => 256.0,
        Engine::TrtLlm => 2048.0,
        Engine::Transformers => 64.0,
        Engine::LlamaCpp | Engine::Ollama => 4.0,
    }
}

pub use crate::advisor::workload::serving::{DEFAULT_OUTPUT_TOKENS, DEFAULT_SPEED, DEFAULT_TTFT_S};

/// How a configuration serves a workload: CONTRACT.md §2.1's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Serving {
    pub engine: Engine,
    pub cards: u32,
    pub kv_bytes_per_token: f64,
    pub kv_capacity_tokens: f64,
    pub max_concurrency: f64,
    pub max_context_tokens: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub decode_tokens_per_s: f64,
    pub ttft_s: f64,
    /// TTFT of one request on an idle replica.
    pub ttft_idle_s: f64,
    pub throughput_tokens_per_s: f64,
    pub per_user_tokens_per_s: f64,
    pub concurrency: f64,
    pub replicas: u32,
    /// The latency targets the load was sized for.
    pub ttft_target_s: f64,
    pub speed_target: f64,
    /// The targets this configuration misses even for one request.
    pub missed: Missed,
    /// The load was stated (concurrency, users, QPS or daily users).
    pub load_asked: bool,
    /// Where the load came from, for the reply's assumptions.
    pub load_from: LoadFrom,
    /// The share of the daily users at once at the peak the load assumed.
    pub peak_share: f64,
    /// The peak QPS the load assumed, and the day's requests and their hours it came
    /// from when the question counted requests a day.
    pub qps: Option<f64>,
    pub daily_requests: Option<f64>,
    pub active_hours: Option<f64>,
    /// The engine's context limit the capacity assumed.
    pub max_model_len: u32,
    /// With no vLLM release named for a model older than the V1 engine's default, the
    /// capacity is the one both engines give; this is V1's, when it is larger.
    pub v1_capacity_tokens: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadFrom {
    None,
    Concurrency,
    Qps,
    DailyUsers,
}

/// The engine a question runs: the one named, llama.cpp for a GGUF quant, else vLLM.
pub fn engine_of(s: &ServingAsk) -> Engine {
    s.engine.unwrap_or(if s.gguf_bits.is_some() {
        Engine::LlamaCpp
    } else {
        Engine::Vllm
    })
}

/// The request the figures assume: the question's input and output, else 512 output
/// tokens and the rest of the context as input (DOMAIN.md §8).
pub fn request(w: &Workload, s: &ServingAsk) -> (u32, u32) {
    // A context that is only the engine's limit (`--max-model-len`) is not a request,
    // except when the question asks the most requests at once: vLLM's own figure
    // ("Maximum concurrency for N tokens per request") counts requests of that limit.
    let limit_only = s.max_model_len == Some(w.context) && s.input_tokens.is_none();
    let ctx = if limit_only && !s.asks_max_concurrency {
        DEFAULT_INFERENCE_CONTEXT.min(w.context)
    } else {
        w.context
    }
    .max(2);
    match (s.input_tokens, s.output_tokens) {
        (Some(i), Some(o)) => (i.max(1), o.max(1)),
        (Some(i), None) => (i.max(1), DEFAULT_OUTPUT_TOKENS),
        (None, Some(o)) => (ctx.saturating_sub(o).max(1), o.max(1)),
        (None, None) => {
            let o = DEFAULT_OUTPUT_TOKENS.min(ctx / 2);
            (ctx - o, o)
        }
    }
}

/// KV bytes one card holds per token when the model is split over `tp` cards: K/V heads
/// divide (each card keeps at least one), an MLA latent is held whole by every card. The
/// second copy some models' own code keeps (`kv_copies`, first-generation Qwen's remote
/// code under HF transformers) is not in a serving engine's paged cache.
pub fn kv_per_card(w: &Workload, tp: u32, engine: Engine) -> f64 {
    per_card(w, kv_bytes_per_token(w), tp, engine)
}

/// `all` bytes per token summed over the cards, as one card holds them.
fn per_card(w: &Workload, mut all: f64, tp: u32, engine: Engine) -> f64 {
    if engine != Engine::Transformers {
        all /= w.arch.kv_copies.max(1.0);
    }
    if kv_whole_on_every_card(w) {
        all
    } else {
        all / (tp.max(1) as f64).min(w.arch.kv_heads.max(1.0))
    }
}

/// Weight bytes at the format the engine runs (a GGUF quant's own bits).
pub fn weights(w: &Workload, p: Precision, s: &ServingAsk) -> f64 {
    match s.gguf_bits {
        Some(bits) if engine_of(s).gguf() => weight_bytes(w, p, Some(bits)),
        _ => weight_bytes(w, p, None),
    }
}

/// Activation bytes per card of one forward over `tokens` tokens.
fn activations(w: &Workload, tokens: f64, tp: u32) -> f64 {
    let a = &w.arch;
    tokens
        * (ACT_INTERMEDIATE_TENSORS * a.intermediate / tp.max(1) as f64
            + ACT_HIDDEN_TENSORS * a.hidden)
        * 2.0
}

/// The context limit the engine starts with: the question's, else the model's maximum
/// (vLLM's default `max_model_len`), else the workload's context.
fn model_len(w: &Workload, model: Option<&Model>, s: &ServingAsk, engine: Engine) -> u32 {
    if let Some(n) = s.max_model_len {
        return n;
    }
    if engine.gguf() {
        return s.max_model_len.unwrap_or(GGUF_DEFAULT_CTX).max(w.context);
    }
    model.map_or(w.context, |m| m.max_context.max(w.context))
}

/// Bytes a process sees of one card: the marketed size read as GiB, or what the driver
/// exposes where the catalog gives it, less what torch does not report.
pub fn usable_bytes(gpu: &Gpu) -> f64 {
    let gib = gpu.visible_mib.map_or(gpu.memory_gb, |m| m / 1024.0);
    gib * GIB * CARD_USABLE
}

/// KV-cache bytes per card the engine leaves once weights, activations and its reserves
/// are placed.
fn kv_memory_per_card(
    w: &Workload,
    p: Precision,
    s: &ServingAsk,
    engine: Engine,
    gpu: &Gpu,
    tp: u32,
    max_len: u32,
) -> f64 {
    let total = usable_bytes(gpu);
    let comm = if tp > 1 { TP_COMM_GIB * GIB } else { 0.0 };
    let weights = weights(w, p, s) / tp.max(1) as f64;
    let free = match engine {
        Engine::Vllm => {
            let util = s.memory_fraction.unwrap_or(VLLM_UTILIZATION);
            let tokens = vllm_profile_tokens(s, gpu, max_len) as f64;
            let forward = activations(w, tokens, tp);
            let copies = if s.vllm_v0() {
                V0_SAMPLER_COPIES
            } else {
                SAMPLER_COPIES
            };
            let sampler = max_batch(engine, gpu, s) * w.arch.vocab * 4.0 * copies;
            total * util - weights - forward.max(sampler) - VLLM_NON_TORCH_GIB * GIB - comm
        }
        Engine::Sglang => {
            let frac = s.memory_fraction.unwrap_or_else(|| sglang_fraction(tp));
            let after_load = total - weights - CONTEXT_GIB * GIB - comm;
            after_load - total * (1.0 - frac)
        }
        Engine::TrtLlm => {
            let act = activations(w, TRT_MAX_NUM_TOKENS, tp);
            TRT_KV_FRACTION * (total - weights - act - CONTEXT_GIB * GIB - comm)
        }
        Engine::Transformers => {
            let act = activations(w, VLLM_V1_BATCH_TOKENS as f64, tp);
            total - weights - act - CONTEXT_GIB * GIB
        }
        Engine::LlamaCpp | Engine::Ollama => {
            total - weights - (GGUF_COMPUTE_GIB + CONTEXT_GIB) * GIB - comm
        }
    };
    free.max(0.0)
}

/// The serving figures of `w` at precision `p` on `tp` cards of `gpu` (one replica),
/// with `linked` cards (NVLink) or not; `model` gives the maximum context and experts.
pub fn serving(
    w: &Workload,
    model: Option<&Model>,
    s: &ServingAsk,
    p: Precision,
    gpu: &Gpu,
    tp: u32,
    linked: bool,
) -> Serving {
    let engine = engine_of(s);
    let tp = tp.max(1);
    let (input, output) = request(w, s);
    let mut max_len = model_len(w, model, s, engine);
    let kv_card = kv_per_card(w, tp, engine);
    // Summed over the cards (CONTRACT.md §2.1): a replicated head or latent counts on each.
    let kv_total = kv_card * tp as f64;
    let request_len = (input + output) as f64;
    // Without a release named, an older model's capacity is the one V0 and V1 both give:
    // V0 profiles a whole max_model_len up to 32K, V1 one scheduler step.
    let either = either_vllm(engine, s, model);
    let v0 = ServingAsk {
        vllm_release: Some(VLLM_LAST_V0),
        ..s.clone()
    };
    let per_token = |mem: f64| if kv_card > 0.0 { mem / kv_card } else { 0.0 };
    let v1_tokens = |len: u32| per_token(kv_memory_per_card(w, p, s, engine, gpu, tp, len));
    let tokens = |len: u32| {
        let v1 = v1_tokens(len);
        if either {
            v1.min(per_token(kv_memory_per_card(
                w, p, &v0, engine, gpu, tp, len,
            )))
        } else {
            v1
        }
    };
    let mut capacity = tokens(max_len);
    if s.max_model_len.is_none() && capacity < request_len && engine == Engine::Vllm {
        // vLLM refuses to start when one sequence of max_model_len does not fit; a
        // shorter --max-model-len profiles a shorter batch and leaves more: the settings
        // to give are those of the request.
        max_len = (input + output).max(VLLM_V1_BATCH_TOKENS);
        capacity = tokens(max_len);
    }
    if engine.gguf() {
        // llama.cpp and Ollama allocate the context they start with (`-c`): the one asked
        // for, else the longest that fits.
        let model_max = model.map_or(f64::INFINITY, |m| m.max_context as f64);
        capacity = match s.max_model_len {
            Some(n) => capacity.min(n as f64),
            None => capacity.min(model_max),
        };
        max_len = ((capacity / 256.0).floor() * 256.0).max(256.0) as u32;
    }
    let request_len = (input + output) as f64;
    let max_concurrency = capacity / request_len;
    // vLLM logs its capacity with windowed layers counted as full ones.
    let logged = if engine == Engine::Vllm {
        let full = per_card(w, kv_bytes_per_token_all_layers(w), tp, engine);
        if full > kv_card && full > 0.0 {
            capacity * kv_card / full
        } else {
            capacity
        }
    } else {
        capacity
    };
    let model_max = model.map_or(f64::INFINITY, |m| m.max_context as f64);
    let max_context = capacity.min(model_max).min(match s.max_model_len {
        Some(n) => n as f64,
        None => f64::INFINITY,
    });

    let r = Replica {
        w,
        model,
        engine,
        gpu,
        p,
        tp,
        linked,
        weight_bytes: weights(w, p, s),
        kv_per_card: kv_card,
        eager: s.eager,
    };
    let decode = speed::single_stream(&r, input, output, s.input_tokens.is_some());

    // The load: the question's concurrency, or its QPS or daily users turned into
    // concurrent requests (DOMAIN.md §8).
    let ttft_target = s.ttft_target_s.unwrap_or(DEFAULT_TTFT_S);
    let speed_target = s.speed_target.unwrap_or(DEFAULT_SPEED);
    let batch_cap = max_concurrency
        .floor()
        .max(0.0)
        .min(max_batch(engine, gpu, s));
    let from = if w.concurrency > 1 && s.asked_load(w.context).is_none() {
        LoadFrom::Concurrency
    } else if s.qps.is_some() {
        LoadFrom::Qps
    } else if s.daily_users.is_some() {
        LoadFrom::DailyUsers
    } else if w.concurrency > 1 || s.single {
        LoadFrom::Concurrency
    } else {
        LoadFrom::None
    };
    let asked = (from != LoadFrom::None).then_some(w.concurrency as f64);
    // The largest concurrency one replica carries within the targets (the offline
    // question has none: the KV bound).
    let within = if s.offline {
        Within {
            carried: batch_cap,
            missed: Missed::default(),
        }
    } else {
        largest_within(&r, input, output, batch_cap, ttft_target, speed_target)
    };
    let per_replica = within.carried.max(1.0);
    let (concurrency, replicas) = match asked {
        // A queue handed over at once (offline, no latency target) is worked through by
        // one configuration at its KV bound, not spread over copies.
        Some(c) if s.offline => (c.max(1.0).min(batch_cap.max(1.0)), 1),
        Some(c) => (
            c.max(1.0),
            ((c.max(1.0) / per_replica).ceil() as u32).max(1),
        ),
        None => (
            if s.offline {
                batch_cap.max(1.0)
            } else {
                per_replica
            },
            1,
        ),
    };
    let each = (concurrency / replicas as f64).min(batch_cap.max(1.0));
    let load = speed::at_load(&r, input, output, each);
    let v1_capacity_tokens = either
        .then(|| v1_tokens(max_len))
        .filter(|v1| capacity > 0.0 && *v1 > capacity * 1.02)
        .map(|v1| logged * v1 / capacity);
    Serving {
        engine,
        cards: tp,
        kv_bytes_per_token: kv_total,
        kv_capacity_tokens: logged,
        max_concurrency,
        max_context_tokens: max_context,
        input_tokens: input,
        output_tokens: output,
        decode_tokens_per_s: decode,
        ttft_s: load.ttft_s,
        ttft_idle_s: speed::prefill_s(&r, input),
        throughput_tokens_per_s: load.throughput * replicas as f64,
        per_user_tokens_per_s: load.per_user,
        concurrency,
        replicas,
        ttft_target_s: ttft_target,
        speed_target,
        missed: within.missed,
        load_asked: asked.is_some(),
        load_from: from,
        peak_share: s.peak_share_or_default(),
        qps: s.qps,
        daily_requests: s.daily_requests,
        active_hours: s.active_hours,
        max_model_len: max_len,
        v1_capacity_tokens,
    }
}

/// The largest concurrency up to `cap` whose TTFT and per-user speed meet the targets
/// (bisection: both worsen as the load grows). A target that one request alone misses
/// cannot be met by any load or any number of copies (an idle copy gives each request
/// the same TTFT and speed): it is reported missed, and the load is sized by the other.
fn largest_within(
    r: &Replica<'_>,
    input: u32,
    output: u32,
    cap: f64,
    ttft: f64,
    speed: f64,
) -> Within {
    let alone = speed::at_load(r, input, output, 1.0);
    let missed = Missed {
        ttft: alone.ttft_s > ttft,
        speed: alone.per_user < speed,
    };
    let ttft = if missed.ttft { f64::INFINITY } else { ttft };
    let speed = if missed.speed { 0.0 } else { speed };
    let ok = |c: f64| {
        let l = speed::at_load(r, input, output, c);
        l.ttft_s <= ttft && l.per_user >= speed
    };
    let carried = if cap < 1.0 {
        cap.max(0.0)
    } else if ok(cap.max(1.0)) {
        cap.max(1.0)
    } else {
        let (mut lo, mut hi) = (1.0_f64, cap.max(1.0));
        while hi - lo > 1.0 {
            let mid = ((lo + hi) / 2.0).floor();
            if ok(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    Within { carried, missed }
}

struct Within {
    carried: f64,
    missed: Missed,
}

impl Serving {
    /// Whether the KV cache left holds one request of the assumed size.
    pub fn holds_one_request(&self) -> bool {
        self.kv_capacity_tokens >= (self.input_tokens + self.output_tokens) as f64
    }
}

/// The latency targets that even one request on an idle copy misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Missed {
    pub ttft: bool,
    pub speed: bool,
}

impl Missed {
    pub fn any(self) -> bool {
        self.ttft || self.speed
    }
}

#[cfg(test)]
mod tests;
