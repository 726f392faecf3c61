use super::*;
use crate::advisor::fixtures::advisor;
use crate::advisor::workload::Asked;

/// The serving figures of a catalog model on `tp` NVLinked cards of `gpu`.
fn on(model: &str, p: Option<Precision>, s: ServingAsk, gpu: &str, tp: u32) -> Serving {
    let cat = &advisor().catalog;
    let asked = Asked {
        model: Some(model.into()),
        precision: p,
        serving: s.clone(),
        ..Asked::default()
    };
    let w = Workload::resolve(&asked, cat).expect("workload");
    let g = cat.gpu(gpu).expect("gpu");
    serving(&w, cat.model(model), &s, w.precision, g, tp, true)
}

fn near(got: f64, published: f64, within: f64) {
    let e = (got - published) / published;
    assert!(
        e.abs() <= within,
        "{got} vs {published}: {:+.1} %",
        e * 100.0
    );
}

fn vllm() -> ServingAsk {
    ServingAsk {
        engine: Some(Engine::Vllm),
        ..ServingAsk::default()
    }
}

#[test]
fn kv_bytes_follow_the_attention_layout() {
    // vLLM issue 10517: 3.81 GiB for 31,232 tokens = 130,986 B/token (GQA, 32 × 8 × 128).
    near(
        on("llama-3.1-8b", None, vllm(), "rtx3090", 1).kv_bytes_per_token,
        130_986.0,
        0.02,
    );
    // vLLM issue 21348 (SGLang log, TP 4): 192,418 B/token over the 4 ranks.
    let s = ServingAsk {
        engine: Some(Engine::Sglang),
        ..ServingAsk::default()
    };
    near(
        on("qwen3-235b-a22b", None, s, "h100-sxm", 4).kv_bytes_per_token,
        192_418.0,
        0.02,
    );
}

#[test]
fn a_serving_engine_pages_one_copy_of_the_kv() {
    // Qwen-7B's config.json: 32 layers × 32 KV heads × 128 → 2 × 32 × 32 × 128 × 2 bytes
    // = 524,288 B/token in vLLM's paged cache; its remote code under HF transformers
    // concatenates a second copy while generating (DOMAIN.md §7, the measured tables).
    let paged = on("qwen-7b", None, vllm(), "rtx4090", 1).kv_bytes_per_token;
    assert_eq!(paged, 524_288.0);
    let hf = ServingAsk {
        engine: Some(Engine::Transformers),
        ..ServingAsk::default()
    };
    assert_eq!(
        on("qwen-7b", None, hf, "rtx4090", 1).kv_bytes_per_token,
        2.0 * paged
    );
}

/// vLLM of a named release (minor.patch of 0.x).
fn vllm_release(r: f64) -> ServingAsk {
    ServingAsk {
        vllm_release: Some(r),
        ..vllm()
    }
}

#[test]
fn vllm_capacity_as_its_logs_print_it() {
    // vLLM issue 10517 (V0, 0.6.x "Memory profiling results"), RTX 3090, max_model_len
    // 20000: "GPU blocks: 1952" × 16 = 31,232 tokens, "Maximum concurrency for 20000
    // tokens per request: 1.56x".
    let s = ServingAsk {
        max_model_len: Some(20_000),
        input_tokens: Some(19_488),
        output_tokens: Some(512),
        ..vllm_release(6.4)
    };
    let r = on("llama-3.1-8b", None, s, "rtx3090", 1);
    near(r.kv_capacity_tokens, 31_232.0, 0.10);
    near(r.max_concurrency, 1.56, 0.10);
    // A longer max_model_len profiles a longer batch and leaves less (23,648 at 29000).
    let s = ServingAsk {
        max_model_len: Some(29_000),
        ..vllm_release(6.4)
    };
    let longer = on("llama-3.1-8b", None, s, "rtx3090", 1);
    assert!(longer.kv_capacity_tokens < r.kv_capacity_tokens);
    near(longer.kv_capacity_tokens, 23_648.0, 0.10);
}

#[test]
fn vllm_v1_profiles_one_scheduler_step() {
    // LMCache issue 1739 (vLLM 0.10, V1): Qwen3-14B on one A100 40GB, max_model_len
    // 32768: "GPU KV cache size: 42,656 tokens", "Maximum concurrency for 32,768 tokens
    // per request: 1.30x". V1 profiles a 2048-token step, not the whole 32K.
    let s = ServingAsk {
        max_model_len: Some(32_768),
        input_tokens: Some(32_256),
        output_tokens: Some(512),
        ..vllm()
    };
    let r = on("qwen3-14b", None, s.clone(), "a100-40g", 1);
    near(r.kv_capacity_tokens, 42_656.0, 0.10);
    near(r.max_concurrency, 1.30, 0.10);
    // Qwen3 (2025-04) came after V1 became the default: naming a release from 0.8 on
    // changes nothing, naming V0 profiles the whole 32K and leaves less.
    let named = ServingAsk {
        vllm_release: Some(10.0),
        ..s.clone()
    };
    assert_eq!(
        on("qwen3-14b", None, named, "a100-40g", 1).kv_capacity_tokens,
        r.kv_capacity_tokens
    );
    let v0 = ServingAsk {
        vllm_release: Some(0.0),
        ..s
    };
    assert!(
        on("qwen3-14b", None, v0, "a100-40g", 1).kv_capacity_tokens < 0.8 * r.kv_capacity_tokens
    );
}

#[test]
fn a_larger_step_budget_profiles_more() {
    // `--max-num-batched-tokens` sets the one step V1 profiles: a 16K step holds more
    // activations than the default 2048 and leaves less KV cache on the same card.
    let s = ServingAsk {
        max_model_len: Some(32_768),
        ..vllm()
    };
    let default = on("qwen3-8b", None, s.clone(), "rtx4090", 1).kv_capacity_tokens;
    let big = ServingAsk {
        max_num_batched_tokens: Some(16_384),
        ..s
    };
    let bigger = on("qwen3-8b", None, big, "rtx4090", 1).kv_capacity_tokens;
    assert!(bigger < default, "{bigger} {default}");
}

#[test]
fn vllm_v0_long_contexts_by_release() {
    // vLLM issue 6746 (0.5.3, before long contexts were chunked): Llama-3.1-405B-FP8 on
    // 8 × H100, max_model_len 131072 profiled whole: "maximum number of tokens that can
    // be stored in KV cache (79392)".
    let p = Some(Precision::Fp8);
    let r = on("llama-3.1-405b", p, vllm_release(5.3), "h100-sxm", 8);
    near(r.kv_capacity_tokens, 79_392.0, 0.10);
    // From 0.5.4 the same start-up profiles one 512-token chunk and leaves far more.
    let chunked = on("llama-3.1-405b", p, vllm_release(6.3), "h100-sxm", 8);
    assert!(chunked.kv_capacity_tokens > 3.0 * r.kv_capacity_tokens);
    // vLLM issue 13061 (0.7, V0): DeepSeek-R1-Distill-Qwen-14B on 2 × RTX 4090, TP 2,
    // --gpu-memory-utilization 0.98, max_model_len 131072: 81,536 tokens.
    let s = ServingAsk {
        memory_fraction: Some(0.98),
        ..vllm_release(7.0)
    };
    near(
        on("deepseek-r1-distill-qwen-14b", None, s, "rtx4090", 2).kv_capacity_tokens,
        81_536.0,
        0.10,
    );
}

#[test]
fn sglang_capacity_from_its_memory_fraction() {
    // vLLM issue 21348: SGLang, 4 × H100, --mem-fraction-static 0.93: 367,404 tokens.
    let s = ServingAsk {
        engine: Some(Engine::Sglang),
        memory_fraction: Some(0.93),
        ..ServingAsk::default()
    };
    near(
        on("qwen3-235b-a22b", Some(Precision::Fp8), s, "h100-sxm", 4).kv_capacity_tokens,
        367_404.0,
        0.10,
    );
}

#[test]
fn single_stream_decode_of_the_published_tables() {
    let out = |e: Engine| ServingAsk {
        engine: Some(e),
        input_tokens: Some(1),
        output_tokens: Some(2048),
        ..ServingAsk::default()
    };
    // Qwen2.5 speed benchmark (vLLM 0.6.3, A100 80G, batch 1): 7B 84.28, 14B 46.3 tokens/s.
    near(
        on("qwen2.5-7b", None, out(Engine::Vllm), "a100-80g", 1).decode_tokens_per_s,
        84.28,
        0.10,
    );
    // Its untied head: a step reads the 1.56 GB head, not the embedding table beside it
    // (reading both gave −6 %).
    near(
        on("qwen2.5-14b", None, out(Engine::Vllm), "a100-80g", 1).decode_tokens_per_s,
        46.3,
        0.05,
    );
    // The same table, HF transformers: 7B 40.38 tokens/s (Python-bound, not bandwidth).
    near(
        on("qwen2.5-7b", None, out(Engine::Transformers), "a100-80g", 1).decode_tokens_per_s,
        40.38,
        0.10,
    );
    // Qwen3 speed benchmark (transformers, H20, batch 1): 8B 45.32 tokens/s. The host of a
    // Hopper card runs the Python loop faster per layer than an A100's.
    near(
        on("qwen3-8b", None, out(Engine::Transformers), "h20", 1).decode_tokens_per_s,
        45.32,
        0.05,
    );
    // Tensor parallelism: 72B on 4 cards 31.37 tokens/s; less than twice 2 cards' speed.
    let tp4 = on("qwen2.5-72b", None, out(Engine::Vllm), "a100-80g", 4).decode_tokens_per_s;
    let tp2 = on("qwen2.5-72b", None, out(Engine::Vllm), "a100-80g", 2).decode_tokens_per_s;
    near(tp4, 31.37, 0.15);
    assert!(tp4 < 2.0 * tp2 && tp4 > tp2, "{tp2} {tp4}");
}

#[test]
fn a_long_prompt_slows_one_stream() {
    let prompt = |e: Engine, input: u32| ServingAsk {
        engine: Some(e),
        input_tokens: Some(input),
        output_tokens: Some(2048),
        ..ServingAsk::default()
    };
    // Qwen2.5 speed benchmark, A100 80G, batch 1, 2048 tokens over the whole call: vLLM
    // 7B 84.28 tokens/s after 1 input token, 70.33 after 30,720 and 28.94 after 129,024
    // (a third of that call is the prefill; 129k is still 27 % fast: the longest
    // prompts' attention runs below the prefill MFU fitted at 2k, left as it is).
    let vllm = |input| {
        on(
            "qwen2.5-7b",
            None,
            prompt(Engine::Vllm, input),
            "a100-80g",
            1,
        )
        .decode_tokens_per_s
    };
    near(vllm(30_720), 70.33, 0.10);
    near(vllm(129_024), 28.94, 0.30);
    // HF transformers attends over the cache copied to every query head: 7B falls from
    // 40.38 to 18.83 tokens/s at 30,720 input tokens; 0.5B stays at 47 (its Python loop
    // sets the pace either way).
    near(
        on(
            "qwen2.5-7b",
            None,
            prompt(Engine::Transformers, 30_720),
            "a100-80g",
            1,
        )
        .decode_tokens_per_s,
        18.83,
        0.15,
    );
    near(
        on(
            "qwen2.5-0.5b",
            None,
            prompt(Engine::Transformers, 30_720),
            "a100-80g",
            1,
        )
        .decode_tokens_per_s,
        47.16,
        0.15,
    );
}

#[test]
fn latency_and_throughput_under_load() {
    // NVIDIA NIM, Llama-3.3-70B FP8 on 2 × H100 (TP2), 5000 in / 500 out: TTFT 0.407 s
    // alone, 0.689 s and 25.81 tokens/s per user at 25 concurrent, 623.4 tokens/s total.
    let s = |single| ServingAsk {
        engine: Some(Engine::TrtLlm),
        input_tokens: Some(5000),
        output_tokens: Some(500),
        single,
        ..ServingAsk::default()
    };
    let one = on(
        "llama-3.1-70b",
        Some(Precision::Fp8),
        s(true),
        "h100-sxm",
        2,
    );
    near(one.ttft_s, 0.407, 0.30);
    let cat = &advisor().catalog;
    let asked = Asked {
        model: Some("llama-3.1-70b".into()),
        precision: Some(Precision::Fp8),
        concurrency: Some(25),
        serving: s(false),
        ..Asked::default()
    };
    let w = Workload::resolve(&asked, cat).expect("workload");
    let g = cat.gpu("h100-sxm").unwrap();
    let load = serving(
        &w,
        cat.model("llama-3.1-70b"),
        &s(false),
        w.precision,
        g,
        2,
        true,
    );
    assert_eq!(load.concurrency, 25.0);
    near(load.ttft_s, 0.689, 0.30);
    near(load.per_user_tokens_per_s, 25.81, 0.30);
    near(load.throughput_tokens_per_s, 623.4, 0.30);
    assert!(load.ttft_s > one.ttft_s && load.per_user_tokens_per_s < one.decode_tokens_per_s);
}

#[test]
fn prefill_runs_the_output_head_once() {
    // TensorRT-LLM 0.13 perf overview, Llama-3.1-8B FP16 on one A100 80GB, 2048 in / 128
    // out, all requests queued: 796.17 output tokens/s, a prefill-bound row. The
    // embedding is a lookup and the output head runs on the last prompt token only:
    // counting both per prompt token (1.05 B of 8.03 B parameters) gave −14 %.
    let s = ServingAsk {
        engine: Some(Engine::TrtLlm),
        input_tokens: Some(2048),
        output_tokens: Some(128),
        offline: true,
        ..ServingAsk::default()
    };
    let r = on("llama-3.1-8b", Some(Precision::Fp16), s, "a100-80g", 1);
    near(r.throughput_tokens_per_s, 796.17, 0.10);
}

#[test]
fn daily_users_become_replicas() {
    // DOMAIN.md §8: 5 % of daily users at once; more users, more copies.
    let cat = &advisor().catalog;
    let g = cat.gpu("a100-80g").unwrap();
    let replicas = |daily| {
        let s = ServingAsk {
            daily_users: Some(daily),
            ..vllm()
        };
        let asked = Asked {
            model: Some("qwen2.5-7b".into()),
            serving: s.clone(),
            ..Asked::default()
        };
        let w = Workload::resolve(&asked, cat).expect("workload");
        assert_eq!(w.concurrency, (daily as f64 * 0.05).ceil() as u32);
        serving(&w, cat.model("qwen2.5-7b"), &s, w.precision, g, 1, true).replicas
    };
    assert_eq!(replicas(100), 1);
    assert!(replicas(200_000) > replicas(20_000));
}

#[test]
fn a_target_one_request_misses_is_reported_not_bought_with_copies() {
    // An idle copy gives one request its best TTFT and speed; copies cannot beat that, so
    // a target one request misses sizes nothing, and the other target sizes the load.
    let cat = &advisor().catalog;
    let g = cat.gpu("a100-80g").unwrap();
    let run = |ttft: f64, speed: f64| {
        let s = ServingAsk {
            input_tokens: Some(4000),
            ttft_target_s: Some(ttft),
            speed_target: Some(speed),
            ..vllm()
        };
        let asked = Asked {
            model: Some("qwen2.5-7b".into()),
            concurrency: Some(50),
            serving: s.clone(),
            ..Asked::default()
        };
        let w = Workload::resolve(&asked, cat).expect("workload");
        serving(&w, cat.model("qwen2.5-7b"), &s, w.precision, g, 1, true)
    };
    let met = run(2.0, 20.0);
    assert_eq!(met.missed, Missed::default());
    // A first token in 1 ms is out of reach: the load is sized by the speed alone.
    let fast = run(0.001, 20.0);
    assert!(fast.missed.ttft && !fast.missed.speed);
    assert_eq!(fast.replicas, run(1e9, 20.0).replicas);
    assert!(fast.replicas < 50);
    // 10,000 tokens/s per user is out of reach: the load is sized by the TTFT alone.
    let quick = run(2.0, 10_000.0);
    assert!(quick.missed.speed && !quick.missed.ttft);
    assert_eq!(quick.replicas, run(2.0, 0.0).replicas);
    assert!(quick.replicas < 50);
}

#[test]
fn a_queue_handed_over_at_once_runs_on_one_configuration() {
    // GPUStack performance lab (vLLM 0.11, one H100 80GB): Qwen3-32B, 500 requests of
    // 2000 in / 100 out queued at once: "Output token throughput 152.42". The queue is
    // worked through at the KV bound by the one card named, not spread over copies.
    let cat = &advisor().catalog;
    let s = ServingAsk {
        offline: true,
        input_tokens: Some(2000),
        output_tokens: Some(100),
        ..vllm()
    };
    let asked = Asked {
        model: Some("qwen3-32b".into()),
        concurrency: Some(500),
        serving: s.clone(),
        ..Asked::default()
    };
    let w = Workload::resolve(&asked, cat).expect("workload");
    let g = cat.gpu("h100-sxm").unwrap();
    let r = serving(&w, cat.model("qwen3-32b"), &s, w.precision, g, 1, true);
    assert_eq!(r.replicas, 1);
    assert!(r.concurrency <= r.max_concurrency.floor().max(1.0));
    near(r.throughput_tokens_per_s, 152.42, 0.30);
    // The same 500 as users waiting on answers need copies.
    let online = ServingAsk {
        offline: false,
        ..s
    };
    let r = serving(&w, cat.model("qwen3-32b"), &online, w.precision, g, 1, true);
    assert!(r.replicas > 1);
}

#[test]
fn gddr6_datacenter_cards_budget_from_what_the_driver_exposes() {
    // nvidia-smi shows 46068 MiB on an L40S "48 GB" and 15360 MiB on a T4 "16 GB".
    let cat = &advisor().catalog;
    near(usable_bytes(cat.gpu("l40s").unwrap()) / GIB, 44.55, 0.01);
    near(usable_bytes(cat.gpu("t4").unwrap()) / GIB, 14.85, 0.01);
    // HBM cards: the marketed GB read as GiB, as torch reports them (79.2 on an H100).
    near(usable_bytes(cat.gpu("h100-sxm").unwrap()) / GIB, 79.2, 0.01);
}

#[test]
fn vllm_logs_windowed_layers_as_full_ones() {
    // dennislee22/vLLM-benchmarking (vLLM 0.10.1.1): gpt-oss-120b on 4 × A100 80GB, TP 4,
    // utilisation 0.8, max_model_len 16384: "GPU KV cache size: 2,640,144 tokens" and
    // "Maximum concurrency for 16,384 tokens per request: 284.25x" — the count treats
    // the 128-token sliding layers as full, the concurrency holds them at their window.
    let s = ServingAsk {
        max_model_len: Some(16_384),
        memory_fraction: Some(0.8),
        input_tokens: Some(8192),
        output_tokens: Some(8192),
        ..vllm()
    };
    let r = on("gpt-oss-120b", None, s, "a100-80g", 4);
    near(r.kv_capacity_tokens, 2_640_144.0, 0.10);
    assert!(r.max_concurrency > 1.5 * r.kv_capacity_tokens / 16_384.0);
}

#[test]
fn llama_cpp_decode_stops_near_a_terabyte_per_second() {
    // XiongjieDai/GPU-Benchmarks-on-LLM-Inference (llama-bench tg1024, Llama-3-8B F16):
    // 54.34 tokens/s on an RTX 4090, 53.18 on an A100 SXM 80GB of twice the bandwidth.
    let s = ServingAsk {
        engine: Some(Engine::LlamaCpp),
        input_tokens: Some(1),
        output_tokens: Some(1024),
        ..ServingAsk::default()
    };
    let on_4090 = on("llama-3-8b", Some(Precision::Fp16), s.clone(), "rtx4090", 1);
    let on_a100 = on("llama-3-8b", Some(Precision::Fp16), s, "a100-80g", 1);
    near(on_4090.decode_tokens_per_s, 54.34, 0.15);
    near(on_a100.decode_tokens_per_s, 53.18, 0.15);
}

#[test]
fn an_older_model_without_a_release_gets_what_both_engines_hold() {
    // Llama-3.1-8B (2024-07) may run on either engine. With no release named, the
    // capacity is V0's (vLLM issue 10517: 31,232 tokens at max_model_len 20000 on an RTX
    // 3090), and V1's larger figure is given beside it.
    let s = ServingAsk {
        max_model_len: Some(20_000),
        ..vllm()
    };
    let r = on("llama-3.1-8b", None, s.clone(), "rtx3090", 1);
    near(r.kv_capacity_tokens, 31_232.0, 0.10);
    let v1 = ServingAsk {
        vllm_release: Some(10.0),
        ..s
    };
    let newer = on("llama-3.1-8b", None, v1, "rtx3090", 1);
    assert!(newer.v1_capacity_tokens.is_none());
    assert_eq!(r.v1_capacity_tokens, Some(newer.kv_capacity_tokens));
    // Above 32K, V0 profiles 512-token chunks and holds more than V1: nothing to add.
    let long = ServingAsk {
        max_model_len: Some(65_536),
        ..vllm()
    };
    assert!(on("llama-3.1-8b", None, long, "rtx3090", 1)
        .v1_capacity_tokens
        .is_none());
}

#[test]
fn the_most_requests_at_once_counts_requests_of_the_limit() {
    // vLLM prints "Maximum concurrency for 16384 tokens per request": asked for the most
    // requests at once under --max-model-len 16384, a request is that long; asked for
    // anything else, the limit is no request size.
    let cat = &advisor().catalog;
    let s = ServingAsk {
        max_model_len: Some(16_384),
        asks_max_concurrency: true,
        ..vllm()
    };
    let asked = Asked {
        model: Some("qwen2.5-14b".into()),
        context: Some(16_384),
        serving: s.clone(),
        ..Asked::default()
    };
    let w = Workload::resolve(&asked, cat).expect("workload");
    let (i, o) = request(&w, &s);
    assert_eq!(i + o, 16_384);
    let speed = ServingAsk {
        asks_max_concurrency: false,
        asks_speed: true,
        ..s
    };
    let (i, o) = request(&w, &speed);
    assert!(i + o < 16_384);
}
