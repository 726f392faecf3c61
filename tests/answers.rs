//! Answers end to end through the core: structured fields for questions whose right
//! answer follows from DOMAIN.md §6, and golden replies (tests/golden/*.md; rewrite
//! them with `UPDATE_GOLDEN=1 cargo test --test main answers` after a deliberate change).

use gpu_advisor::advisor::{Advisor, State};
use gpu_advisor::data;
use serde_json::Value;
use std::sync::OnceLock;

fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(data::embedded)
}

/// Runs the turns of one conversation; returns the last answer as JSON.
fn ask(turns: &[&str]) -> Value {
    let mut state = State::default();
    let mut last = Value::Null;
    for t in turns {
        let (a, next) = advisor().answer(t, &state);
        state = next;
        last = serde_json::to_value(&a).expect("serialises");
    }
    last
}

fn check(turns: &[&str], expect: &[(&str, Value)]) {
    let a = ask(turns);
    for (path, want) in expect {
        let got = path.split('.').fold(&a, |v, k| &v[k]);
        assert_eq!(got, want, "{turns:?}: {path} in {a}");
    }
}

#[test]
fn recommend_follows_the_headroom_rule() {
    // Qwen-7B (first generation) BF16 ~20 GB: too much for 24 GB with 20 % headroom.
    check(
        &["Qwen-7B 推理用什么卡"],
        &[
            ("intent", "recommend".into()),
            ("recommendation.gpu", "v100s-32g".into()),
        ],
    );
    // 405B only fits one 8x H100 machine in FP8.
    check(
        &["Llama-3.1-405B FP8 推理"],
        &[
            ("recommendation.offer", "h100-x8".into()),
            ("recommendation.count", 1.into()),
        ],
    );
    // Domestic hardware only when asked for, and then only it.
    check(
        &["信创项目，微调 14B，用昇腾"],
        &[
            ("recommendation.gpu", "ascend-910b".into()),
            ("constraints.domestic", true.into()),
        ],
    );
}

#[test]
fn feasibility_verdicts() {
    check(
        &["3090 能跑 13B 吗"],
        &[
            ("verdict.gpu", "rtx3090".into()),
            ("verdict.fits", false.into()),
        ],
    );
    check(&["3090 能跑 13B INT4 吗"], &[("verdict.fits", true.into())]);
    check(
        &["四张 A100 40G 跑 70B FP16，并发 32 路，上下文 8k 够吗"],
        &[("verdict.count", 4.into()), ("verdict.fits", false.into())],
    );
}

#[test]
fn each_number_belongs_to_one_slot() {
    // "8k" is the context, not the number of streams.
    for q in [
        "3090 能跑 13B 吗, 4 路并发 8k 上下文",
        "Qwen-14B 推理 4 路并发 8k 上下文",
        "Qwen-14B 推理 上下文 8k 并发 4",
    ] {
        check(
            &[q],
            &[
                ("workload.concurrency", 4.into()),
                ("workload.context_tokens", 8192.into()),
            ],
        );
    }
    check(
        &["Qwen-14B 推理, 并发 16 路, 32k 上下文"],
        &[
            ("workload.concurrency", 16.into()),
            ("workload.context_tokens", 32768.into()),
        ],
    );
}

#[test]
fn follow_ups_modify_the_previous_workload() {
    check(
        &["3090 能跑 13B 吗", "INT4 呢"],
        &[
            ("intent", "feasibility".into()),
            ("workload.precision", "int4".into()),
            ("verdict.fits", true.into()),
        ],
    );
    check(
        &["LoRA 微调 Qwen-7B 用什么卡", "换成全参微调呢"],
        &[
            ("workload.task", "full".into()),
            ("workload.model", "qwen-7b".into()),
        ],
    );
    check(
        &["Qwen-14B 推理", "并发 30 呢"],
        &[("workload.concurrency", 30.into())],
    );
    check(
        &["70B 推理", "预算只有 6000"],
        &[("constraints.budget_cny_month", 6000.0.into())],
    );
}

#[test]
fn budget_and_price() {
    check(
        &["预算三千五能干嘛"],
        &[
            ("intent", "budget".into()),
            ("constraints.budget_cny_month", 3500.0.into()),
            ("recommendation.gpu", "a100-40g".into()),
        ],
    );
    check(
        &["budget $500 a month"],
        &[("constraints.budget_cny_month", 3600.0.into())],
    );
    let a = ask(&["两张 A100 40G 一年多少钱"]);
    assert_eq!(a["intent"], "price");
    let reply = a["reply"].as_str().expect("reply");
    assert!(
        reply.contains("¥53,760") && reply.contains("¥67,200"),
        "{reply}"
    );
}

#[test]
fn a_rental_period_is_priced_in_the_recommendation() {
    // Under a year at the monthly price; from 12 months on at the annual one.
    for (q, months, field) in [
        ("租 3 个月跑 7B 推理", 3.0, "monthly_cny"),
        (
            "deploy llama 3 8b for 12 months",
            12.0,
            "annual_monthly_cny",
        ),
    ] {
        let a = ask(&[q]);
        let r = &a["recommendation"];
        let (lo, hi) = (
            r[field]["min"].as_f64().expect("price"),
            r[field]["max"].as_f64().expect("price"),
        );
        assert_eq!(lo, hi, "a fixed price keeps the check simple: {r}");
        let total = gpu_advisor::advisor::reply::money(lo * months);
        let reply = a["reply"].as_str().expect("reply");
        assert!(reply.contains(&total), "{q}: wants {total} in {reply}");
    }
}

#[test]
fn training_over_budget_is_not_stepped_down_and_points_to_lighter_methods() {
    // LoRA on a 14B model needs ~34 GB: one A100 40G misses the 20 % headroom, two cost
    // ¥5,600, and the PCIe cards train on one card only (DOMAIN.md §6).
    for (q, lang) in [
        ("预算5000每月，做LoRA微调14B", "zh"),
        ("LoRA fine-tune a 14B model, budget 5000 yuan a month", "en"),
    ] {
        let a = ask(&[q]);
        assert_eq!(a["lang"], lang, "{q}");
        assert_eq!(a["workload"]["task"], "lora", "{q}");
        assert!(a["recommendation"].is_null(), "{q}: {a}");
        let reply = a["reply"].as_str().expect("reply");
        assert!(
            !reply.contains("已试到 INT4") && !reply.contains("even at INT4"),
            "training is not stepped down: {reply}"
        );
        assert!(reply.contains("5,000"), "names the budget: {reply}");
        // The way out is a lighter method that the budget does buy.
        let cheap_qlora = a["alternatives"]
            .as_array()
            .expect("alternatives")
            .iter()
            .any(|o| {
                o["precision"] == "int4" && o["monthly_cny"]["max"].as_f64().unwrap() <= 5000.0
            });
        assert!(cheap_qlora, "{q}: {}", a["alternatives"]);
    }
}

#[test]
fn bad_input_gets_a_reply() {
    for q in [
        "",
        "🤔",
        "\0\0\0",
        "-5B 模型",
        "99999999B 模型",
        "<script>alert(1)</script>",
    ] {
        let a = ask(&[q]);
        assert!(a["recommendation"].is_null(), "{q:?}: {a}");
        assert!(!a["reply"].as_str().unwrap_or("").is_empty());
        assert!(!a["reply"].as_str().unwrap_or("").contains("<script>"));
    }
    let huge = "A100 ".repeat(250_000);
    let a = ask(&[&huge]);
    assert!(a["reply"]
        .as_str()
        .is_some_and(|r| r.chars().count() <= 4000));
}

const GOLDEN: &[(&str, &str)] = &[
    ("lora-qwen-14b", "微调 Qwen-14B 要什么卡?"),
    ("4090-70b", "4090 能跑 70B 吗"),
    ("budget-3500", "预算三千五能干嘛"),
    ("price-a100-2-year", "两张 A100 40G 一年多少钱"),
    ("compare-a100-h100", "A100 和 H100 怎么选"),
    ("faq-nvlink", "NVLink 是什么"),
    (
        "en-feasibility",
        "Can an RTX 3090 fine-tune a 7B model with LoRA?",
    ),
    ("help", "/start"),
    (
        "serving-daily-users",
        "想用 vLLM 部署 Qwen3-32B，日活 2000 人",
    ),
    (
        "serving-users-en",
        "How many concurrent users can one A100 40G serve for Qwen2.5-14B?",
    ),
    (
        "serving-speed-en",
        "Qwen2.5-72B on 2 × A100 80G, tokens per second?",
    ),
    (
        "serving-llamacpp",
        "用 llama.cpp 跑 Qwen2.5-7B Q4_K_M，一张 4090，最长上下文能开多少？",
    ),
    ("serving-qps", "Qwen2.5-7B 做客服，QPS 5，首字延迟 1 秒以内"),
];

/// The single-stream speeds a reply states, in order.
fn stated_speeds(reply: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for cue in [
        "单路生成约 ",
        "Single-stream decode about ",
        "one stream decodes about ",
    ] {
        for (i, _) in reply.match_indices(cue) {
            let digits: String = reply[i + cue.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            out.extend(digits.parse::<u64>().ok());
        }
    }
    out
}

#[test]
fn one_configuration_one_speed() {
    // The recommendation line and the serving block describe the same cards: one figure,
    // the serving estimate's (JSON and text alike).
    for q in [
        "Deploy Llama-3.1-70B in FP8 on 2 H100 cards with vLLM",
        "Qwen2.5-32B 推理，2 张 A100 80G",
    ] {
        let a = ask(&[q]);
        let speeds = stated_speeds(a["reply"].as_str().expect("reply"));
        assert!(speeds.len() >= 2, "{q}: {speeds:?}");
        assert!(speeds.windows(2).all(|w| w[0] == w[1]), "{q}: {speeds:?}");
        let serving = a["serving"]["decode_tokens_per_s"]
            .as_f64()
            .expect("serving");
        assert_eq!(a["estimate"]["decode_tokens_per_s"].as_f64(), Some(serving));
        // The JSON holds the figure to 0.1, the text to the unit.
        assert!(
            (speeds[0] as f64 - serving).abs() <= 0.55,
            "{q}: {speeds:?} {serving}"
        );
    }
}

#[test]
fn golden_replies() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (name, q) in GOLDEN {
        let got = format!(
            "{q}\n---\n{}\n",
            ask(&[q])["reply"].as_str().expect("reply")
        );
        let path = dir.join(format!("{name}.md"));
        if update {
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            got, want,
            "golden reply {name} changed; rerun with UPDATE_GOLDEN=1 if intended"
        );
    }
}

#[test]
fn every_follow_up_of_every_kind_of_turn_gets_a_reply() {
    // Found by the `ask_body` fuzz target: "INT4 呢" after an FAQ answer came back empty.
    let firsts = [
        "NVLink 是什么",
        "预算三千五能干嘛",
        "A100 多少钱",
        "A100 和 H100 对比",
        "你好",
        "/help",
        "3090 能跑 13B 吗",
        "微调 Qwen-14B 要什么卡?",
        "为什么 4090 不能多卡",
    ];
    let follow_ups = [
        "INT4 呢",
        "并发 100 呢",
        "那 A100 呢",
        "换成全参呢",
        "预算只有 6000",
        "32k 上下文呢",
        "年付呢",
        "那 7B 呢",
    ];
    for first in firsts {
        for next in follow_ups {
            let a = ask(&[first, next]);
            let reply = a["reply"].as_str().unwrap_or_default();
            assert!(!reply.trim().is_empty(), "{first} → {next}: {a}");
        }
    }
}
