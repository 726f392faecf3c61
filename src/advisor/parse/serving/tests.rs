use crate::advisor::fixtures::advisor;

/// What the parser reads of serving from `question`: `Asked::serving` as its JSON, then
/// the concurrency and context it implies.
fn check(question: &str, expected: &str) {
    let p = advisor()
        .parser
        .parse(question, advisor().catalog.billing.usd_cny);
    let a = &p.asked;
    let got = format!(
        "{} concurrency={:?} context={:?}",
        serde_json::to_string(&a.serving).expect("json"),
        a.concurrency,
        a.context
    );
    assert_eq!(got, expected, "{question:?}");
}

#[test]
fn engines_and_request_sizes() {
    check(
        "Llama-3.3-70B FP8 用 NIM（TensorRT-LLM）部署在 2 张 H100 上 TP2，单个用户发 5000 token 的提示、要 500 token 输出，首字延迟多少秒？",
        r#"{"engine":"trt-llm","input_tokens":5000,"output_tokens":500,"single":true,"asks_speed":true} concurrency=None context=Some(5500)"#,
    );
    check(
        "Qwen2.5-7B-Instruct-AWQ with plain HF transformers (AutoAWQ kernels) on one A100 80GB, batch 1, 2048 new tokens: generation speed?",
        r#"{"engine":"transformers","output_tokens":2048,"single":true,"asks_speed":true} concurrency=None context=None"#,
    );
    check(
        "Llama-2-7B FP16 用 TensorRT-LLM 在 1 张 A100 80G 上，输入输出都是 2048 token，不限延迟的最大吞吐是多少？",
        r#"{"engine":"trt-llm","input_tokens":2048,"output_tokens":2048,"offline":true,"asks_throughput":true} concurrency=None context=Some(4096)"#,
    );
    check(
        "用 Ollama 跑 Qwen2.5-7B Q4_K_M",
        r#"{"engine":"ollama","gguf_bits":4.8} concurrency=None context=None"#,
    );
    check(
        "llama.cpp 跑 Qwen2.5-7B 的 Q8_0 GGUF，-c 8192",
        r#"{"engine":"llama.cpp","max_model_len":8192,"gguf_bits":8.5} concurrency=None context=Some(8192)"#,
    );
    // llama-server's context is shared by its parallel slots.
    check(
        "llama-server -m llama-3.1-8b-q8_0.gguf --ctx-size 16384 -np 4",
        r#"{"engine":"llama.cpp","max_model_len":16384,"gguf_bits":8.5} concurrency=Some(4) context=Some(4096)"#,
    );
}

#[test]
fn benchmark_notation() {
    check(
        "Llama-3.1-8B on 1x H100 with vLLM, input/output 1024/128, --max-num-seqs 64: throughput?",
        r#"{"engine":"vllm","input_tokens":1024,"output_tokens":128,"max_num_seqs":64,"asks_throughput":true} concurrency=None context=Some(1152)"#,
    );
    check(
        "SGLang, ISL 2048 OSL 256, concurrency 32",
        r#"{"engine":"sglang","input_tokens":2048,"output_tokens":256} concurrency=Some(32) context=Some(2304)"#,
    );
}

#[test]
fn loads_and_targets() {
    check(
        "想用 vLLM 部署 Qwen3-32B，日活 2000 人",
        r#"{"engine":"vllm","daily_users":2000} concurrency=None context=None"#,
    );
    check(
        "Qwen2.5-14B 推理，QPS 10，首字延迟 1 秒以内，每秒至少 30 个 token",
        r#"{"qps":10.0,"ttft_target_s":1.0,"speed_target":30.0} concurrency=None context=None"#,
    );
    check(
        "50 个客服同时用 Qwen2.5-7B",
        r#"{} concurrency=Some(50) context=None"#,
    );
    check(
        "How many concurrent users can one A100 40G serve for Qwen2.5-14B?",
        r#"{"asks_max_concurrency":true} concurrency=None context=None"#,
    );
    check(
        "Qwen2.5-7B 在 1 张 4090 上最长上下文能开多少，吞吐多少",
        r#"{"asks_max_context":true,"asks_throughput":true} concurrency=None context=None"#,
    );
    check(
        "Llama-3.1-8B on a single RTX 3090 with vLLM, --max-model-len 29000, gpu_memory_utilization 0.95",
        r#"{"engine":"vllm","max_model_len":29000,"memory_fraction":0.95} concurrency=None context=Some(29000)"#,
    );
}

#[test]
fn request_sizes_written_as_adjectives() {
    // "N-token prompts", "M-token replies", "N tokens in and M out".
    check(
        "Gemma 2 9B on one L40S with vLLM, 2048-token prompts and 300-token replies: TTFT?",
        r#"{"engine":"vllm","input_tokens":2048,"output_tokens":300,"asks_speed":true} concurrency=None context=Some(2348)"#,
    );
    check(
        "SGLang, 8 users each sending 600 tokens in and 200 out",
        r#"{"engine":"sglang","input_tokens":600,"output_tokens":200} concurrency=Some(8) context=Some(800)"#,
    );
}

#[test]
fn vllm_releases() {
    // A release before 0.8 is the V0 engine; V0 named alone reads as release 0.
    check(
        "vllm==0.6.4 上跑 Qwen2.5-14B，KV cache 多大？",
        r#"{"engine":"vllm","vllm_release":6.4} concurrency=None context=None"#,
    );
    check(
        "VLLM_USE_V1=0 vllm serve Llama-3.1-8B",
        r#"{"engine":"vllm","vllm_release":0.0} concurrency=None context=None"#,
    );
    check(
        "Qwen3-8B on vLLM v0.11 (V1)",
        r#"{"engine":"vllm","vllm_release":11.0} concurrency=None context=None"#,
    );
}

#[test]
fn step_budget() {
    check(
        "vllm serve Qwen3-8B --max-num-batched-tokens 16384 --max-num-seqs 32",
        r#"{"engine":"vllm","max_num_seqs":32,"max_num_batched_tokens":16384} concurrency=None context=None"#,
    );
}

#[test]
fn engine_settings_said_every_way() {
    check(
        "Qwen2-7B-Instruct BF16 用 vLLM 0.10 部署在 1 张 A100 80G 上，gpu_memory_utilization 设 0.5，max_model_len 16384",
        r#"{"engine":"vllm","max_model_len":16384,"memory_fraction":0.5,"vllm_release":10.0} concurrency=None context=Some(16384)"#,
    );
    check(
        "vllm, memory utilization set to 0.85, max model len set to 8192",
        r#"{"engine":"vllm","max_model_len":8192,"memory_fraction":0.85} concurrency=None context=Some(8192)"#,
    );
    check(
        "显存利用率调到 95%，GPU 利用率 30% 左右",
        r#"{"memory_fraction":0.95} concurrency=None context=None"#,
    );
    check(
        "how many full 16,384-token requests fit in the KV cache at once?",
        r#"{"input_tokens":8192,"output_tokens":8192} concurrency=None context=Some(16384)"#,
    );
    check(
        "500 个请求一次性全部压上去（每个输入 4000 token、输出 200 token），输出吞吐多少",
        r#"{"input_tokens":4000,"output_tokens":200,"offline":true,"asks_throughput":true} concurrency=None context=Some(4200)"#,
    );
    check(
        "500 requests of 2000 input / 100 output tokens all submitted at once",
        r#"{"input_tokens":2000,"output_tokens":100,"offline":true} concurrency=Some(500) context=Some(2100)"#,
    );
}
