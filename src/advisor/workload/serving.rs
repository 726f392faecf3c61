//! What a question states about serving (CONTRACT.md §2.1, DOMAIN.md §8): the engine,
//! the request size, the load (users, QPS, daily users) and the latency targets, and
//! which serving figure it asks for. Every field optional, laid over the previous turn
//! like the other constraints. The concurrency itself stays `Asked::concurrency`.

use serde::{Deserialize, Serialize};

/// DOMAIN.md §8 defaults: 512 output tokens a request; time to first token ≤ 2 s; each
/// user ≥ 20 tokens/s; 5 % of daily users at once at the peak.
pub const DEFAULT_OUTPUT_TOKENS: u32 = 512;
pub const DEFAULT_TTFT_S: f64 = 2.0;
pub const DEFAULT_SPEED: f64 = 20.0;
pub const PEAK_SHARE_OF_DAILY: f64 = 0.05;
/// A day's requests with no hours said peak by the 80/20 rule of capacity planning (80 %
/// of the day's requests in 20 % of its hours): 0.8 / (0.2 × 24 h), a day's requests
/// spread evenly over 6 hours.
pub const DAILY_PEAK_HOURS: f64 = 6.0;
/// "Office hours" with no number: an 8-hour workday.
pub const OFFICE_HOURS: f64 = 8.0;

/// The inference engine a configuration is served with (CONTRACT.md §2.1 `engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Engine {
    #[serde(rename = "vllm")]
    Vllm,
    #[serde(rename = "sglang")]
    Sglang,
    #[serde(rename = "trt-llm")]
    TrtLlm,
    #[serde(rename = "transformers")]
    Transformers,
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    #[serde(rename = "ollama")]
    Ollama,
}

impl Engine {
    pub fn id(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::TrtLlm => "trt-llm",
            Engine::Transformers => "transformers",
            Engine::LlamaCpp => "llama.cpp",
            Engine::Ollama => "ollama",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
            Engine::TrtLlm => "TensorRT-LLM",
            Engine::Transformers => "HF transformers",
            Engine::LlamaCpp => "llama.cpp",
            Engine::Ollama => "Ollama",
        }
    }
    /// GGUF engines (llama.cpp and Ollama) allocate the context they start with.
    pub fn gguf(self) -> bool {
        matches!(self, Engine::LlamaCpp | Engine::Ollama)
    }
}

/// The serving figures a question states or asks for. `Default` is "nothing said".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServingAsk {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Engine>,
    /// The engine was read only from a GGUF quant's name ("Q4_K_M"), which Ollama runs
    /// as well: an Ollama said before stays. Read from this turn only: never stored.
    #[serde(skip)]
    pub engine_by_quant: bool,
    /// Prompt tokens of the average request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    /// Generated tokens of the average request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daily_users: Option<u32>,
    /// The share of the daily users at once at the peak, when the question gives it
    /// (else DOMAIN.md §8's 5 %).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_share: Option<f64>,
    /// Requests per second at the peak (said, or from the requests a day).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qps: Option<f64>,
    /// Requests a day, when the load is counted so ("每天 2 万次调用").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daily_requests: Option<f64>,
    /// The hours of the day those requests fall in, when said ("集中在白天 8 小时").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_hours: Option<f64>,
    /// How long one request takes end to end, seconds, when the question says
    /// ("each request takes ~6 s"): Little's law uses it instead of the targets' time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_s: Option<f64>,
    /// Time to first token the customer accepts, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_target_s: Option<f64>,
    /// Decode speed each user needs, tokens/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_target: Option<f64>,
    /// The engine's context limit (`--max-model-len`, `-c`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u32>,
    /// The engine's batch limit (`--max-num-seqs`, `--max-running-requests`,
    /// `--max_batch_size`, `--parallel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<u32>,
    /// The engine's token budget per step (`--max-num-batched-tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_batched_tokens: Option<u32>,
    /// `--gpu-memory-utilization` / `--mem-fraction-static`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_fraction: Option<f64>,
    /// The vLLM release named, as minor.patch of 0.x ("0.6.3" → 6.3); 0 for the V0
    /// engine named without a release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vllm_release: Option<f64>,
    /// Bits per weight of a GGUF quant named in the question (Q4_K_M ≈ 4.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gguf_bits: Option<f64>,
    /// Without CUDA graphs (`--enforce-eager`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub eager: bool,
    /// One request at a time ("单路", "batch 1"): a load of one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub single: bool,
    /// Offline batch with no latency bound (maximum throughput).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offline: bool,
    /// "最多多少并发", "how many users can it serve".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_max_concurrency: bool,
    /// "最长上下文", "longest context".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_max_context: bool,
    /// "吞吐", "throughput".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_throughput: bool,
    /// "每秒多少 token", "how fast".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_speed: bool,
}

/// The first vLLM release whose engine is V1 by default (0.8, `VLLM_USE_V1=1`).
pub const VLLM_V1_RELEASE: f64 = 8.0;

impl ServingAsk {
    /// The V0 engine: a release before 0.8 named, or V0 itself.
    pub fn vllm_v0(&self) -> bool {
        self.vllm_release.is_some_and(|r| r < VLLM_V1_RELEASE)
    }

    pub fn is_default(&self) -> bool {
        *self == ServingAsk::default()
    }

    /// Whether the question said anything about serving.
    pub fn stated(&self) -> bool {
        !self.is_default()
    }

    /// Whether the question asks a serving question (a figure or a load).
    pub fn asks(&self) -> bool {
        self.asks_max_concurrency
            || self.asks_max_context
            || self.asks_throughput
            || self.asks_speed
            || self.daily_users.is_some()
            || self.qps.is_some()
    }

    /// The load in concurrent requests that QPS or daily users amount to (DOMAIN.md §8):
    /// QPS by Little's law, times a request's duration (as stated, else at the latency
    /// targets: TTFT, then the output at the per-user speed); daily users as 5 % of them at once. `context`
    /// gives the default output length.
    pub fn asked_load(&self, context: u32) -> Option<f64> {
        let ttft = self.ttft_target_s.unwrap_or(DEFAULT_TTFT_S);
        let speed = self.speed_target.unwrap_or(DEFAULT_SPEED);
        let output = self
            .output_tokens
            .unwrap_or(DEFAULT_OUTPUT_TOKENS.min(context.max(2) / 2)) as f64;
        if let Some(q) = self.qps {
            return Some(q * self.request_s.unwrap_or(ttft + output / speed));
        }
        self.daily_users
            .map(|d| d as f64 * self.peak_share_or_default())
    }

    /// The peak QPS of a day's requests: evenly over the hours said, else by the 80/20
    /// rule (`DAILY_PEAK_HOURS`).
    pub fn daily_peak_qps(&self) -> Option<f64> {
        let hours = self.active_hours.unwrap_or(DAILY_PEAK_HOURS);
        self.daily_requests.map(|n| n / (hours * 3600.0))
    }

    /// The share of the daily users at once at the peak: the question's, else DOMAIN.md
    /// §8's 5 %.
    pub fn peak_share_or_default(&self) -> f64 {
        self.peak_share.unwrap_or(PEAK_SHARE_OF_DAILY)
    }

    /// This turn's statements laid over the previous turn's: what is said now wins;
    /// what is asked is this turn's alone.
    pub fn over(&self, prev: &ServingAsk) -> ServingAsk {
        let mut m = prev.clone();
        macro_rules! take {
            ($($f:ident),*) => { $( if self.$f.is_some() { m.$f = self.$f; } )* };
        }
        take!(
            engine,
            input_tokens,
            output_tokens,
            daily_users,
            peak_share,
            qps,
            daily_requests,
            active_hours,
            request_s,
            ttft_target_s,
            speed_target,
            max_model_len,
            max_num_seqs,
            max_num_batched_tokens,
            memory_fraction,
            vllm_release,
            gguf_bits
        );
        if self.engine_by_quant && prev.engine == Some(Engine::Ollama) {
            m.engine = prev.engine;
        }
        m.eager |= self.eager;
        m.offline = self.offline;
        // A QPS said now replaces a day's count; hours or a count said now give the peak again.
        if self.qps.is_some() && self.daily_requests.is_none() {
            m.daily_requests = None;
            m.active_hours = None;
        } else if self.daily_requests.is_some() || self.active_hours.is_some() {
            m.qps = m.daily_peak_qps().or(m.qps);
        }
        m.single = self.single;
        m.asks_max_concurrency = self.asks_max_concurrency;
        m.asks_max_context = self.asks_max_context;
        m.asks_throughput = self.asks_throughput;
        m.asks_speed = self.asks_speed;
        m
    }
}
