//! The core pipeline (parse + estimate + recommend + render) per question, over the
//! development corpus's questions, the parser alone and its scan, and start-up (load +
//! validate + compile).
//! `cargo bench --bench pipeline`; results in BENCHMARKS.md.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use gpu_advisor::advisor::State;
use gpu_advisor::data;
use std::time::{Duration, Instant};

/// The allocator the `gpu-advisor` binary runs with (src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn questions() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/eval/dev.jsonl");
    let fallback = "微调 Qwen-14B 要什么卡?\n4090 能跑 70B 吗\n预算三千五能干嘛\nA100 和 H100 怎么选\nNVLink 是什么".to_string();
    let text = std::fs::read_to_string(path).ok();
    let mut qs: Vec<String> = match text {
        Some(t) => t
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| {
                v["turns"]
                    .as_array()
                    .and_then(|t| t.last())
                    .and_then(|q| q.as_str())
                    .map(String::from)
            })
            .collect(),
        None => fallback.lines().map(String::from).collect(),
    };
    qs.retain(|q| q.len() < 1000);
    qs
}

fn pipeline(c: &mut Criterion) {
    let advisor = data::embedded();
    let qs = questions();
    let state = State::default();
    c.bench_function("answer (whole dev corpus, per question)", |b| {
        let mut i = 0;
        b.iter(|| {
            let q = &qs[i % qs.len()];
            i += 1;
            black_box(advisor.answer(black_box(q), &state))
        })
    });
    // The parser alone, and its one pass of every pattern over the question.
    let usd_cny = advisor.catalog.billing.usd_cny;
    c.bench_function("parse (whole dev corpus, per question)", |b| {
        let mut i = 0;
        b.iter(|| {
            let q = &qs[i % qs.len()];
            i += 1;
            black_box(advisor.parser.parse(black_box(q), usd_cny))
        })
    });
    let lex = advisor.parser.lexicon();
    let normalised: Vec<String> = qs.iter().map(|q| lex.normalise(q)).collect();
    c.bench_function("scan (whole dev corpus, per question)", |b| {
        let mut i = 0;
        b.iter(|| {
            let q = &normalised[i % normalised.len()];
            i += 1;
            black_box(lex.scan(black_box(q)))
        })
    });
    // Per-question latency distribution over the corpus (median and p99).
    let mut samples = Vec::new();
    for _ in 0..50 {
        for q in &qs {
            let t0 = Instant::now();
            black_box(advisor.answer(q, &state));
            samples.push(t0.elapsed());
        }
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize];
    println!(
        "per-question latency over {} answers: median {:?}, p99 {:?}, max {:?}",
        samples.len(),
        pct(0.5),
        pct(0.99),
        samples[samples.len() - 1]
    );
}

fn startup(c: &mut Criterion) {
    let mut g = c.benchmark_group("startup");
    g.measurement_time(Duration::from_secs(10)).sample_size(20);
    g.bench_function("load + validate catalog + compile intents", |b| {
        b.iter(|| black_box(data::embedded()))
    });
    g.finish();
}

/// What `POST /v1/ask` adds around the pipeline: the conversation store (load + save in
/// the memory store, a new conversation each time) and metrics, then the JSON body.
fn http_path(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let services = gpu_advisor::server::Services::build(data::embedded(), Default::default())
        .expect("services");
    let qs = questions();
    let mut g = c.benchmark_group("http path");
    let mut i = 0u64;
    g.bench_function("Chat::handle (store + answer + metrics)", |b| {
        b.iter(|| {
            let q = &qs[i as usize % qs.len()];
            i += 1;
            let m = gpu_advisor::app::Inbound {
                chat: format!("bench-{i}"),
                text: q.clone(),
                ..Default::default()
            };
            black_box(rt.block_on(services.chat.handle(&m)))
        })
    });
    let state = State::default();
    let advisor = data::embedded();
    let answers: Vec<_> = qs.iter().map(|q| advisor.answer(q, &state).0).collect();
    g.bench_function("answer to JSON", |b| {
        let mut i = 0;
        b.iter(|| {
            i += 1;
            black_box(serde_json::to_vec(&answers[i % answers.len()]).expect("json"))
        })
    });
    g.finish();
}

criterion_group!(benches, pipeline, http_path, startup);
criterion_main!(benches);
