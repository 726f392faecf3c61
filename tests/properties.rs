//! Properties of the core: no input panics or runs away, memory grows with the
//! workload, and a recommendation always meets the headroom rule for its own estimate.

use gpu_advisor::advisor::recommend::{self, Limits, HEADROOM};
use gpu_advisor::advisor::workload::{Asked, Precision, Task, Workload};
use gpu_advisor::advisor::{estimate, Advisor, State};
use gpu_advisor::data;
use proptest::prelude::*;
use std::sync::OnceLock;

fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(data::embedded)
}

fn workload(size: f64, task: Task, context: u32, concurrency: u32) -> Workload {
    let asked = Asked {
        size_b: Some(size),
        task: Some(task),
        context: Some(context),
        concurrency: Some(concurrency),
        ..Asked::default()
    };
    Workload::resolve(&asked, &advisor().catalog).expect("a size resolves")
}

fn task() -> impl Strategy<Value = Task> {
    prop_oneof![
        Just(Task::Inference),
        Just(Task::Lora),
        Just(Task::Qlora),
        Just(Task::Full)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_gets_an_answer(s in ".{0,300}") {
        let (a, _) = advisor().answer(&s, &State::default());
        prop_assert!(a.reply().chars().count() <= 4000);
        prop_assert!(!a.reply().trim().is_empty());
    }

    #[test]
    fn any_follow_up_of_any_turn_gets_an_answer(
        first in prop::sample::select(vec![
            "NVLink 是什么", "3090 能跑 13B 吗", "预算三千五能干嘛", "A100 多少钱",
            "A100 和 H100 对比", "微调 Qwen-14B 要什么卡?", "你好", "what is MIG?",
        ]),
        modifier in prop::sample::select(vec!["INT4", "并发 100", "那 A100", "全参", "32k 上下文", "年付", "7B", "预算 6000"]),
        rest in ".{0,40}",
    ) {
        let (_, state) = advisor().answer(first, &State::default());
        let (a, _) = advisor().answer(&format!("{modifier}{rest} 呢"), &state);
        prop_assert!(!a.reply().trim().is_empty(), "{} → {}{}", first, modifier, rest);
        prop_assert!(a.reply().chars().count() <= 4000);
    }

    #[test]
    fn questions_with_numbers_never_panic(n in 0u64..u64::MAX, unit in prop::sample::select(vec!["B", "k", "万", "亿", " tokens", "路并发", "张", "元"])) {
        let q = format!("{n}{unit} 模型推理，预算 {n}，上下文 {n}k");
        let (a, _) = advisor().answer(&q, &State::default());
        prop_assert!(a.reply().chars().count() <= 4000);
    }

    #[test]
    fn memory_grows_with_params(a in 0.5f64..500.0, b in 0.5f64..500.0, t in task()) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let m = |s| estimate::bill(&workload(s, t, 2048, 1), if t == Task::Qlora { Precision::Int4 } else { Precision::Bf16 }).framework_total();
        prop_assert!(m(lo) <= m(hi) + 1e-9, "{lo} -> {}, {hi} -> {}", m(lo), m(hi));
    }

    #[test]
    fn memory_grows_with_context_and_concurrency(c1 in 256u32..65536, c2 in 256u32..65536, n1 in 1u32..64, n2 in 1u32..64) {
        let m = |c, n| estimate::bill(&workload(14.0, Task::Inference, c, n), Precision::Bf16).framework_total();
        prop_assert!(m(c1.min(c2), 1) <= m(c1.max(c2), 1) + 1e-9);
        prop_assert!(m(4096, n1.min(n2)) <= m(4096, n1.max(n2)) + 1e-9);
    }

    #[test]
    fn recommendations_meet_the_headroom(size in 0.5f64..800.0, t in task(), ctx in 512u32..32768, conc in 1u32..32) {
        let w = workload(size, t, ctx, conc);
        let plan = recommend::plan(&advisor().catalog, &w, &Limits::default());
        if let Some(c) = plan.best {
            prop_assert!(c.per_card_gb * HEADROOM <= c.card_memory_gb + 1e-9);
            prop_assert!(c.per_card_gb + 1e-9 >= estimate::bill(&w, c.precision).per_card(c.cards));
        }
    }
}

#[test]
fn one_megabyte_of_anything() {
    for s in [
        "a".repeat(1 << 20),
        "显存".repeat(1 << 18),
        "\0".repeat(1 << 20),
        "🤔".repeat(1 << 18),
    ] {
        let (a, _) = advisor().answer(&s, &State::default());
        assert!(a.reply().chars().count() <= 4000);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn normalising_twice_changes_nothing(
        s in "[ 0-9a-zA-Z０-９Ａ-Ｚ万千百两兩張塊顯訓練預算每個月年一二三五的,，.]{0,40}|.{0,80}",
    ) {
        let lex = advisor().parser.lexicon();
        let once = lex.normalise(&s);
        prop_assert_eq!(lex.normalise(&once), once);
    }

    #[test]
    fn every_number_ends_in_at_most_one_slot(
        conc in 10u32..60,
        ctx_k in prop::sample::select(vec![4u32, 8, 16, 32]),
        budget in prop::sample::select(vec![1200u32, 2500, 3800, 4500, 6600, 9000]),
        cards in prop::sample::select(vec![2u32, 4, 8]),
        months in prop::sample::select(vec![3u32, 5, 7, 9]),
        order in Just(()).prop_perturb(|_, mut rng| {
            let mut o = vec![0usize, 1, 2, 3, 4];
            for i in (1..o.len()).rev() {
                o.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            o
        }),
    ) {
        let parts = [
            format!("{conc} 路并发"),
            format!("上下文 {ctx_k}k"),
            format!("预算 {budget}"),
            format!("{cards} 张 A100"),
            format!("租 {months} 个月"),
        ];
        let q = format!(
            "Qwen2.5-14B 推理，{}",
            order.iter().map(|&i| parts[i].as_str()).collect::<Vec<_>>().join("，")
        );
        let p = advisor().parser.parse(&q, 7.2);
        let a = &p.asked;
        prop_assert_eq!(a.concurrency, Some(conc), "{}", q);
        prop_assert_eq!(a.context, Some(ctx_k * 1024), "{}", q);
        prop_assert_eq!(a.budget_cny, Some(f64::from(budget)), "{}", q);
        prop_assert_eq!(a.gpu_count, Some(cards), "{}", q);
        prop_assert_eq!(a.months, Some(f64::from(months)), "{}", q);
    }

    #[test]
    fn every_typed_number_ends_in_its_one_slot(
        conc in 10u32..60,
        lo in prop::sample::select(vec![2000u32, 3000, 4000]),
        step in prop::sample::select(vec![500u32, 1000, 2000]),
        months in prop::sample::select(vec![3u32, 5, 7, 9]),
        output in prop::sample::select(vec![150u32, 300, 500, 800]),
        ttft in prop::sample::select(vec![1u32, 2]),
        wording in prop::array::uniform5(0usize..3),
        order in Just(()).prop_perturb(|_, mut rng| {
            let mut o = vec![0usize, 1, 2, 3, 4];
            for i in (1..o.len()).rev() {
                o.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            o
        }),
    ) {
        let hi = lo + step;
        let parts = [
            [format!("{conc} 路并发"), format!("{conc} 人同时在线"), format!("{conc} concurrent users")],
            [format!("预算 {lo}-{hi}"), format!("每月 {lo}到{hi} 元"), format!("{lo}-{hi} 元一个月")],
            [format!("租 {months} 个月"), format!("for {months} months"), format!("用 {months} 个月")],
            [format!("每次回答 {output} token"), format!("answers around {output} tokens"), format!("输出 {output} tokens")],
            [format!("首字 {ttft} 秒内"), format!("TTFT under {ttft}s"), format!("首字延迟 {ttft} 秒以内")],
        ];
        let q = format!(
            "Qwen2.5-14B 推理，{}",
            order.iter().map(|&i| parts[i][wording[i]].as_str()).collect::<Vec<_>>().join("，")
        );
        let p = advisor().parser.parse(&q, 7.2);
        let a = &p.asked;
        prop_assert_eq!(a.concurrency, Some(conc), "{}", q);
        prop_assert_eq!(a.budget_cny, Some(f64::from(hi)), "{}", q);
        prop_assert_eq!(a.months, Some(f64::from(months)), "{}", q);
        prop_assert_eq!(a.serving.output_tokens, Some(output), "{}", q);
        prop_assert_eq!(a.serving.ttft_target_s, Some(f64::from(ttft)), "{}", q);
        // No number in a second slot.
        prop_assert_eq!(a.context, None, "{}", q);
        prop_assert_eq!(a.gpu_count, None, "{}", q);
        prop_assert_eq!(a.micro_batch, None, "{}", q);
        prop_assert_eq!(a.train_tokens, None, "{}", q);
        prop_assert_eq!(a.serving.qps, None, "{}", q);
        prop_assert_eq!(a.serving.daily_users, None, "{}", q);
        prop_assert_eq!(a.serving.speed_target, None, "{}", q);
    }

    #[test]
    fn a_follow_up_restating_the_question_changes_nothing(
        model in prop::sample::select(vec![
            "Qwen2.5-14B", "Qwen2.5-7B", "Llama-3.1-70B", "Llama-3-8B", "一个 30B 的模型",
            "DeepSeek-R1-Distill-Qwen-32B", "Mixtral-8x7B", "GLM-4-9B", "Qwen3-8B",
        ]),
        task in prop::sample::select(vec!["推理", "部署", "LoRA 微调", "全参微调", "inference", "fine-tune", "训练", ""]),
        extras in prop::sample::subsequence(vec![
            "并发 8", "上下文 16k", "预算 6000", "预算每月 3000", "int4", "不想量化", "国产卡",
            "不要 H100", "两张 A100 40G", "用 4090", "租 3 个月", "batch 4", "用 vllm",
            "budget $2000 a month", "20 users at once", "1000 亿 token",
        ], 0..4),
        question in any::<bool>(),
        again in 0usize..3,
    ) {
        let mut q = format!("{model} {task}");
        for e in &extras {
            q.push('，');
            q.push_str(e);
        }
        if question {
            q.push_str(" 用什么卡？");
        }
        // Restated as it was, or introduced as a follow-up in the question's own language
        // (another language would rightly switch the reply's).
        let zh = q.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let again = match (again, zh) {
            (0, _) => "",
            (1, true) => "那 ",
            (2, true) => "如果是 ",
            (1, false) => "what about ",
            (_, _) => "and ",
        };
        let (first, state) = advisor().answer(&q, &State::default());
        let (restated, _) = advisor().answer(&format!("{again}{q}"), &state);
        prop_assert_eq!(answer_json(&first), answer_json(&restated), "{:?} then {:?}", q, again);
    }
}

/// The answer's JSON without what belongs to the turn rather than the question (the
/// reply's wording of a follow-up).
fn answer_json(a: &gpu_advisor::advisor::Answer) -> serde_json::Value {
    let mut v = serde_json::to_value(a).expect("answer serialises");
    if let Some(o) = v.as_object_mut() {
        o.remove("reply");
    }
    v
}
