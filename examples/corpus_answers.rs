//! Answers every question of the development corpus ROUNDS times (default 20) on one
//! thread and prints the count: a fixed workload for profilers. With callgrind the
//! instruction count per answer is repeatable whatever else the machine is doing:
//!   cargo build --release --example corpus_answers
//!   valgrind --tool=callgrind target/release/examples/corpus_answers 5

use gpu_advisor::advisor::State;
use gpu_advisor::data;
use std::hint::black_box;

/// The allocator the `gpu-advisor` binary runs with (src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/eval/dev.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let questions: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["turns"].as_array()?.last()?.as_str().map(String::from))
        .collect();
    let advisor = data::embedded();
    let state = State::default();
    let mut n = 0;
    for _ in 0..rounds {
        for q in &questions {
            black_box(advisor.answer(black_box(q), &state));
            n += 1;
        }
    }
    println!("{n} answers");
}
