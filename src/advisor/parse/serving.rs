//! Serving slots: the engine, the request size, the load, the latency targets and the
//! serving figure asked for (DOMAIN.md §8), into `Asked::serving`. A GGUF quant name
//! sets the engine (llama.cpp) and the weight format's real bits; a request size stated
//! as input and output sets the context when the question gives none.

use super::slots::{negated_since, rate_follows};
use crate::advisor::lexicon::{Found, Lexicon, Scan, Slot};
use crate::advisor::workload::serving::OFFICE_HOURS;
use crate::advisor::workload::{Asked, Engine, Precision};

/// Bits per weight of GGUF quants by the digit of their name, for the K-quant "M" mix
/// people use (llama.cpp `tools/quantize/README.md` table for Llama-3.1-8B: Q2_K 2.96,
/// Q3_K_M 3.91, Q4_K_M 4.89, Q5_K_M 5.70, Q6_K 6.56, Q8_0 8.50 bits per weight; DOMAIN.md
/// §8: Q4_K_M ≈ 4.8, Q8_0 ≈ 8.5).
const GGUF_BITS: &[(u32, f64)] = &[
    (1, 1.8),
    (2, 2.96),
    (3, 3.91),
    (4, 4.8),
    (5, 5.7),
    (6, 6.56),
    (7, 8.5),
    (8, 8.5),
];

/// Reads the serving statements of one question into `a.serving` (and the concurrency
/// and context they imply when the question states none).
pub fn serving(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    claimed: &mut Vec<(usize, usize)>,
    a: &mut Asked,
) {
    let s = &mut a.serving;
    // Every number a serving slot reads is claimed (where the number is).
    let taken = std::cell::RefCell::new(Vec::new());
    let num = |slot: Slot, k_binary: bool| {
        let f = lex.find_in(scan, slot, text, k_binary);
        if let Some(f) = &f {
            taken.borrow_mut().push(f.num);
        }
        f
    };
    // A share said in words ("十分之一", "三成") claims its whole match: the one of
    // "十分之一" and the three of "三成" are not counts of their own.
    let whole = |slot: Slot| {
        let f = lex.find_in(scan, slot, text, false)?;
        taken.borrow_mut().push((f.start, f.end));
        Some(f.value)
    };
    // The engine named first wins ("NIM (TensorRT-LLM)", "transformers + AutoGPTQ"),
    // unless declined ("不用 vllm，就用 HF transformers").
    let negation = lex.has_in(scan, Slot::NegationWord);
    let mut said: Vec<(Found, Engine)> = [
        (Slot::EngineVllm, Engine::Vllm),
        (Slot::EngineSglang, Engine::Sglang),
        (Slot::EngineTrtLlm, Engine::TrtLlm),
        (Slot::EngineTransformers, Engine::Transformers),
        (Slot::EngineLlamaCpp, Engine::LlamaCpp),
        (Slot::EngineOllama, Engine::Ollama),
    ]
    .iter()
    .filter_map(|&(slot, e)| num(slot, false).map(|f| (f, e)))
    .collect();
    said.sort_by_key(|(f, _)| f.start);
    // A negation reaches back only to the engine named before ("不用 vLLM 用 ollama").
    let floors: Vec<usize> = std::iter::once(0)
        .chain(said.iter().map(|(f, _)| f.end))
        .collect();
    let named: Vec<(Found, Engine)> = said
        .into_iter()
        .zip(floors)
        .filter(|((f, _), floor)| !(negation && negated_since(lex, text, *floor, f.start)))
        .map(|(named, _)| named)
        .collect();
    s.engine = named.iter().min_by_key(|(f, _)| f.start).map(|&(_, e)| e);
    // Ollama runs llama.cpp: a GGUF quant named before it ("Q4_K_M（用 ollama）") is
    // Ollama's.
    let quant_only = |(f, e): &(Found, Engine)| {
        *e == Engine::LlamaCpp && !text[f.start..f.end].contains("llama")
    };
    if s.engine == Some(Engine::LlamaCpp)
        && named.iter().any(quant_only)
        && named.iter().any(|(_, e)| *e == Engine::Ollama)
    {
        s.engine = Some(Engine::Ollama);
    }
    // "KV cache 用 q8_0", "-ctk q8_0": the cache's format, not the weights'.
    let kv = lex.all_in(scan, Slot::Kv8bit, text, false);
    let in_kv = |f: &Found| kv.iter().any(|k| k.start <= f.start && f.end <= k.end);
    s.gguf_bits = lex
        .all_in(scan, Slot::Gguf, text, false)
        .into_iter()
        .find(|f| !in_kv(f))
        .and_then(|f| {
            taken.borrow_mut().push(f.num);
            GGUF_BITS
                .iter()
                .find(|(d, _)| *d == f.value as u32)
                .map(|(_, b)| *b)
        });
    // Ollama's library tags without a quant ("deepseek-r1:14b", "qwen2.5:7b") pull the
    // Q4_K_M build (ollama.com/library: deepseek-r1:14b is 9.0 GB, 14.8 B × 4.9 bits).
    if s.gguf_bits.is_none() && s.engine == Some(Engine::Ollama) && a.precision.is_none() {
        s.gguf_bits = GGUF_BITS.iter().find(|(d, _)| *d == 4).map(|(_, b)| *b);
    }
    if let Some(bits) = s.gguf_bits {
        if s.engine.is_none() {
            s.engine = Some(Engine::LlamaCpp);
        }
        a.precision = Some(if bits <= 5.0 {
            Precision::Int4
        } else {
            Precision::Int8
        });
    }
    // Llama.cpp named by no word of its own, only by a quant (or by none): Ollama's too.
    s.engine_by_quant = s.engine == Some(Engine::LlamaCpp) && named.iter().all(quant_only);
    let count = |slot: Slot, max: f64| {
        num(slot, true)
            .map(|f| f.value)
            .filter(|v| *v >= 1.0 && *v <= max)
            .map(|v| v as u32)
    };
    s.input_tokens = count(Slot::InputTokens, 1e8);
    s.output_tokens = count(Slot::OutputTokens, 1e7);
    s.max_model_len = count(Slot::MaxModelLen, 1e8);
    s.max_num_seqs = count(Slot::MaxNumSeqs, 1e6);
    s.max_num_batched_tokens = count(Slot::MaxNumBatchedTokens, 1e8);
    s.vllm_release = num(Slot::VllmVersion, false)
        .map(|f| f.value)
        .filter(|v| *v >= 1.0 && *v < 100.0)
        .or_else(|| lex.has_in(scan, Slot::VllmV0).then_some(0.0));
    s.memory_fraction = num(Slot::MemoryFraction, false)
        .map(|f| {
            if f.value > 1.0 {
                f.value / 100.0
            } else {
                f.value
            }
        })
        .filter(|v| *v > 0.05 && *v <= 1.0);
    s.eager = lex.has_in(scan, Slot::Eager);
    s.offline = lex.has_in(scan, Slot::Offline);
    // "a 5-person team that sends one request at a time": however many people, one
    // request is in flight.
    if lex.has_in(scan, Slot::OneAtATime) {
        a.concurrency = Some(1);
    }
    s.single = lex.has_in(scan, Slot::Single) || a.concurrency == Some(1);
    s.daily_users = num(Slot::DailyUsers, false)
        .map(|f| f.value)
        .filter(|v| *v >= 1.0 && *v <= 1e10)
        .map(|v| v as u32);
    // "2,000 employees … maybe 2% at peak": the share at the peak, of the people said.
    s.peak_share = num(Slot::PeakShare, false)
        .map(|f| f.value / 100.0)
        .or_else(|| whole(Slot::PeakFraction).map(|n| 1.0 / n))
        .or_else(|| whole(Slot::PeakTenths).map(|n| n / 10.0))
        .filter(|v| *v > 0.0 && *v <= 1.0);
    if s.peak_share.is_some() && s.daily_users.is_none() {
        s.daily_users = num(Slot::UserBase, false)
            .map(|f| f.value)
            .filter(|v| *v >= 1.0 && *v <= 1e10)
            .map(|v| v as u32);
    }
    s.qps = num(Slot::Qps, false)
        .map(|f| f.value)
        .or_else(|| num(Slot::Qpm, false).map(|f| f.value / 60.0))
        .filter(|v| *v > 0.0 && *v <= 1e7);
    s.daily_requests = num(Slot::DailyRequests, false)
        .map(|f| f.value)
        .filter(|v| *v >= 1.0 && *v <= 1e12);
    if s.daily_requests.is_some() {
        s.active_hours = num(Slot::ActiveHours, false)
            .map(|f| f.value)
            .filter(|h| *h >= 1.0 && *h <= 24.0)
            .or_else(|| lex.has_in(scan, Slot::OfficeHours).then_some(OFFICE_HOURS));
        if s.qps.is_none() {
            s.qps = s.daily_peak_qps();
        }
    }
    s.request_s = num(Slot::RequestSeconds, false)
        .map(|f| f.value)
        .filter(|v| *v > 0.0 && *v <= 3600.0);
    s.ttft_target_s = num(Slot::TtftTarget, false)
        .map(|f| f.value)
        .or_else(|| num(Slot::TtftTargetMs, false).map(|f| f.value / 1000.0))
        .filter(|v| *v > 0.0 && *v <= 600.0);
    s.speed_target = num(Slot::SpeedTarget, false)
        .map(|f| f.value)
        .filter(|v| *v > 0.0 && *v <= 1e5);
    s.asks_max_concurrency = lex.has_in(scan, Slot::AsksMaxConcurrency);
    s.asks_max_context = lex.has_in(scan, Slot::AsksMaxContext);
    s.asks_throughput = lex.has_in(scan, Slot::AsksThroughput);
    s.asks_speed = lex.has_in(scan, Slot::AsksSpeed);
    if a.concurrency.is_none() {
        a.concurrency = count(Slot::ServingConcurrency, 1e6);
    }
    // A request stated as a total, or as input and output, is the context (at least).
    // "10k requests per day" is a load over time, not a request's length.
    let request = num(Slot::RequestTokens, true)
        .filter(|f| !rate_follows(lex, text, f))
        .map(|f| f.value)
        .filter(|v| *v >= 1.0 && *v <= 1e8)
        .map(|v| v as u32);
    claimed.extend(taken.into_inner());
    if let (Some(r), None) = (request, s.input_tokens) {
        let out = s.output_tokens.unwrap_or(r / 2).min(r);
        s.input_tokens = Some(r - out);
        s.output_tokens = Some(out);
    }
    // The context holds the prompt and the reply, when both are said; a prompt alone
    // ("prompts around 2k tokens") is the context the customer names.
    if let Some(i) = s.input_tokens {
        let len = i + s.output_tokens.unwrap_or(0);
        if a.context.is_none_or(|c| c < len) {
            a.context = Some(len);
        }
    }
    // The engine starts only if one sequence of its context limit fits ("max seq len
    // (40960) is larger than … KV cache"): with no other length said, that is the context.
    if let (None, None, Some(len)) = (a.context, s.input_tokens, s.max_model_len) {
        a.context = Some(len);
    }
    // llama-server's "-c 16384 -np 4" is 16384 tokens shared by four slots of 4096 each
    // (tools/server/server.cpp: `n_ctx_slot = n_ctx / params.n_parallel`).
    let flag = |slot: Slot| {
        lex.find_in(scan, slot, text, false)
            .map(|f| f.value)
            .filter(|v| *v >= 1.0 && *v <= 1e8)
    };
    // The whole is what `-c`/`--ctx-size` set (`max_model_len`, read above).
    if let (Some(total), Some(np), Some(ctx)) =
        (s.max_model_len, flag(Slot::LlamaCppParallel), a.context)
    {
        if matches!(s.engine, None | Some(Engine::LlamaCpp)) && ctx == total {
            a.context = Some((f64::from(total) / np).floor().max(1.0) as u32);
        }
    }
}

#[cfg(test)]
mod tests;
