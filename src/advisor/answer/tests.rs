use super::*;
use crate::advisor::fixtures::{advisor, catalog_with, lexicon, GPUS, OFFERS};
use crate::advisor::reply::money_range;

/// The last answer of a conversation as "intent recommendation verdict | topics", where
/// the recommendation is "offer×count precision" and the verdict "fits" or "too small".
fn summary(advisor: &Advisor, turns: &[&str]) -> String {
    let a = last_answer(advisor, turns);
    let mut parts = vec![a.intent.id().to_string()];
    if let Some(r) = &a.recommendation {
        parts.push(format!("{}×{} {}", r.offer, r.count, r.precision));
    }
    if let Some(v) = &a.verdict {
        parts.push(if v.fits { "fits" } else { "too small" }.to_string());
    }
    format!("{} | {}", parts.join(" "), a.topics.join(","))
}

/// The answer to the last turn of a conversation.
fn last_answer(advisor: &Advisor, turns: &[&str]) -> Answer {
    let mut state = State::default();
    let mut last = None;
    for q in turns {
        let (a, next) = advisor.answer(q, &state);
        state = next;
        last = Some(a);
    }
    last.expect("a turn")
}

fn check(turns: &[&str], expected: &str) {
    assert_eq!(summary(advisor(), turns), expected, "{turns:?}");
}

#[test]
fn each_kind_of_question() {
    check(&["Qwen-7B 推理用什么卡"], "recommend v100s-32g×1 fp16 | ");
    check(
        &["4090 能跑 70B 吗"],
        "feasibility v100s-32g×8 fp16 too small | pitfall-4090-70b",
    );
    check(&["A100 多少钱"], "price a100-40g×1 bf16 | ");
    check(&["A100 和 4090 怎么选"], "compare | consumer-vs-datacenter");
    check(
        &["预算三千五能干嘛"],
        "budget a100-40g×1 bf16 | pitfall-unit-price-only",
    );
    check(&["NVLink 是什么"], "faq | nvlink");
    check(&["你好"], "help | ");
}

#[test]
fn a_follow_up_modifies_the_last_workload() {
    // "INT4 呢" after LoRA: QLoRA, which fits a 24 GB card.
    check(
        &["微调 Qwen-14B 要什么卡", "INT4 呢"],
        "recommend rtx3090×1 int4 | ",
    );
    // 100 sequences of 4096 tokens: a KV cache of some 200 GB.
    check(
        &["4090 能跑 Qwen-7B 吗", "并发 100 呢"],
        "feasibility a100-80g-x8×1 bf16 too small | concurrency",
    );
    // A new question after an FAQ stands alone.
    check(&["NVLink 是什么", "INT4 呢"], "unknown | ");
}

#[test]
fn the_reply_is_the_rendered_markdown_and_the_bill_adds_up() {
    for q in [
        "Qwen-14B 全参微调需要几张卡",
        "4090 能跑 70B 吗",
        "H100 年付多少",
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        // The JSON's `reply` is the markdown of the neutral reply, rendered on serialising.
        let json = serde_json::to_value(&a).expect("serialises");
        assert_eq!(json["reply"].as_str(), Some(a.reply().as_str()), "{q}");
        assert!(!a.rendered.is_blank(), "{q}");
        if let Some(e) = &a.estimate {
            let parts = e.weights_gb
                + e.kv_cache_gb
                + e.activations_gb
                + e.gradients_gb
                + e.optimizer_gb
                + e.overhead_gb;
            assert!((round1(parts) - e.total_gb).abs() < 1e-9, "{q}: {e:?}");
        }
        assert!(a.alternatives.len() <= 4, "{q}");
    }
}

/// Add-ons asked with a price are priced in from the offer's `addons`, not from the text.
#[test]
fn add_ons_asked_for_are_priced_in() {
    let cat = &advisor().catalog;
    let offer = cat
        .offers
        .iter()
        .find(|o| o.gpu == "a100-40g" && !o.addons.is_empty())
        .expect("an A100 40G offer with add-ons");
    let of = |kind: &str| {
        offer
            .addons
            .iter()
            .find(|x| x.kind == kind)
            .map_or(0.0, |x| x.price)
    };
    let total = offer.price.min + of("ram") + of("disk");
    let expected = format!("{}/", crate::advisor::reply::money(total));
    for q in [
        "A100 40G 定制款，加到 128G 内存，再加 1T 硬盘，一个月总共多少？",
        "How much is an A100 40G a month with 128 GB RAM and an extra 1TB of storage?",
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent.id(), "price", "{q}");
        assert!(
            a.reply().contains(&expected),
            "{q}: {expected} in {}",
            a.reply()
        );
    }
    let (a, _) = advisor().answer("A100 40G 多少钱", &State::default());
    assert!(!a.reply().contains(&expected));
}

/// Pitfalls follow the card's flags in gpus.toml: a card renamed there keeps its
/// warnings, and a card given a flag gets the warning that goes with it.
#[test]
fn pitfalls_follow_the_card_flags_not_their_ids() {
    let renamed_gpus = GPUS
        .replace("id = \"rtx4090\"", "id = \"geforce-4090\"")
        .replace("id = \"h100-sxm\"", "id = \"hopper-sxm\"");
    let renamed_offers = OFFERS
        .replace("gpu = \"rtx4090\"", "gpu = \"geforce-4090\"")
        .replace("gpu = \"h100-sxm\"", "gpu = \"hopper-sxm\"");
    let cat = catalog_with(Some(&renamed_gpus), Some(&renamed_offers)).expect("catalog");
    let renamed = Advisor::new(cat, lexicon());
    for turns in [
        &["4090 能跑 70B 吗"][..],
        &["4090 能训 Qwen-7B 吗"],
        &["H100 跑 Qwen-7B 推理行吗"],
    ] {
        let before = summary(advisor(), turns);
        let after = summary(&renamed, turns)
            .replace("geforce-4090", "rtx4090")
            .replace("hopper-sxm", "h100-sxm");
        assert_eq!(after, before, "{turns:?}");
        assert!(before.contains("pitfall-"), "{before}");
    }
}

/// The last answer of a conversation as chosen JSON fields, "path=value" joined by
/// spaces (null fields as "-").
fn fields(turns: &[&str], paths: &[&str]) -> String {
    let mut state = State::default();
    let mut last = serde_json::Value::Null;
    for q in turns {
        let (a, next) = advisor().answer(q, &state);
        state = next;
        last = serde_json::to_value(&a).expect("answer serialises");
    }
    paths
        .iter()
        .map(|p| {
            let v = p.split('.').fold(&last, |v, k| &v[k]);
            let v = match v {
                serde_json::Value::Null => "-".to_string(),
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            format!("{p}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The conversation's last answer has `expected` at `paths` (see [`fields`]).
fn check_fields(turns: &[&str], paths: &[&str], expected: &str) {
    assert_eq!(fields(turns, paths), expected, "{turns:?}");
}

#[test]
fn requests_a_day_are_a_load_by_littles_law() {
    let f = |turns: &[&str], expected: &str| {
        let got = fields(turns, &["workload.concurrency", "serving.replicas"]);
        assert_eq!(got, expected, "{turns:?}");
    };
    // 20,000 a day over 8 hours is 0.69 QPS; a request of 300 output tokens at the
    // targets (2 s to the first token, then 20 tokens/s) takes 17 s: 11.8 at once.
    let day = "每天大概 2 万次调用，基本集中在白天 8 小时，平均每次输入 1500 token、输出 300，用 Qwen2.5-7B 需要几张卡？";
    f(&[day], "workload.concurrency=12 serving.replicas=1");
    // Five times the requests, then twice that, as follow-ups.
    f(
        &[day, "改成每天 10 万次呢"],
        "workload.concurrency=60 serving.replicas=1",
    );
    f(
        &[day, "改成每天 10 万次呢", "调用量翻倍呢"],
        "workload.concurrency=119 serving.replicas=2",
    );
    // With no hours said, the 80/20 rule: the day's requests over 6 hours, and the reply
    // says so.
    let (a, _) = advisor().answer(
        "50k requests a day on Qwen2.5-7B, 1500 tokens in and 300 out",
        &State::default(),
    );
    assert_eq!(a.workload.as_ref().map(|w| w.concurrency), Some(40));
    let reply = a.reply();
    assert!(reply.contains("80/20 rule"), "{reply}");
}

#[test]
fn a_load_said_again_another_way_replaces_it_and_instead_leaves_the_card_out() {
    // Daily users after a concurrency: 5 % of 2,000 at once (DOMAIN.md §8), not the 50.
    assert_eq!(
        fields(
            &[
                "客服场景用qwen2.5-7b，高峰大概50个人同时在线问，要几张卡",
                "要是按日活2000算呢"
            ],
            &["intent", "workload.concurrency"],
        ),
        "intent=recommend workload.concurrency=100"
    );
    // And a concurrency after daily users is that concurrency.
    assert_eq!(
        fields(
            &["Qwen2.5-7B 客服，日活 2000", "并发改成 30"],
            &["workload.concurrency", "serving.concurrency"],
        ),
        "workload.concurrency=30 serving.concurrency=30.0"
    );
    // "what would you rent instead" after a verdict on a card: the workload without it.
    assert_eq!(
        fields(
            &[
                "Qwen2.5-32B in bf16 on one A100 40GB?",
                "ok so what would you rent instead"
            ],
            &[
                "intent",
                "workload.params_b",
                "constraints.gpu",
                "recommendation.gpu"
            ],
        ),
        "intent=recommend workload.params_b=32.76 constraints.gpu=- recommendation.gpu=v100s-32g"
    );
}

#[test]
fn follow_ups_change_one_slot_and_keep_the_rest() {
    let f = check_fields;
    // A correction that names no earlier value: the slot its words name.
    f(
        &[
            "预算一万，想跑个七百亿参数的量化版做推理",
            "预算打错了，是两万",
        ],
        &[
            "intent",
            "constraints.budget_cny_month",
            "workload.precision",
        ],
        "intent=recommend constraints.budget_cny_month=20000.0 workload.precision=int4",
    );
    f(
        &[
            "need to serve llama 3.1 70b for an internal tool",
            "around 30 concurrent users",
            "sorry, 60 not 30",
        ],
        &["intent", "workload.concurrency", "workload.model"],
        "intent=recommend workload.concurrency=60 workload.model=llama-3.1-70b",
    );
    // A model said again after "打错了": the same question on that model.
    f(
        &[
            "qwen1.5-72b 全参 sft，cutoff_len 1024，2 台 8 卡 A100 80G 够不够",
            "sorry 打错了，模型是 qwen1.5-32b 不是 72b",
        ],
        &["intent", "workload.model", "workload.task", "verdict.count"],
        "intent=feasibility workload.model=qwen1.5-32b workload.task=full verdict.count=16",
    );
    // A topic question in between keeps the workload for the follow-up after it.
    f(
        &[
            "我们是律所，想私有化部署 Qwen2.5-32B 做合同审查",
            "数据不能出境，只能放内地机房",
            "并发 15 就够了",
        ],
        &["intent", "workload.model", "workload.concurrency"],
        "intent=recommend workload.model=qwen2.5-32b workload.concurrency=15",
    );
    // A correction names the value it replaces: that slot changes, the rest stays.
    f(
        &[
            "Llama-3.1-8B 推理，上下文 80k，并发 4",
            "sorry I meant 8k not 80k",
            "so which card should I rent?",
        ],
        &[
            "intent",
            "workload.context_tokens",
            "workload.concurrency",
            "lang",
        ],
        "intent=recommend workload.context_tokens=8192 workload.concurrency=4 lang=en",
    );
    f(
        &[
            "Qwen2.5-14B 推理，并发 10",
            "并发改成 40",
            "不对，还是 10，但上下文要 32k",
        ],
        &["workload.concurrency", "workload.context_tokens"],
        "workload.concurrency=10 workload.context_tokens=32768",
    );
    f(
        &[
            "一个 30B 的模型推理",
            "并发 20",
            "sorry, I meant 3B not 30B",
        ],
        &["workload.params_b", "workload.concurrency"],
        "workload.params_b=3.0 workload.concurrency=20",
    );
    f(
        &["70B 推理用什么卡", "我们是信创项目，必须国产卡", "INT8"],
        &["lang", "workload.precision", "constraints.domestic"],
        "lang=zh workload.precision=int8 constraints.domestic=true",
    );
    // A model switch keeps the budget and the load.
    f(
        &[
            "GLM-4-9B 推理，每月 3500 以内，40 人同时用",
            "换用 Qwen2.5-7B 试试",
        ],
        &[
            "workload.model",
            "constraints.budget_cny_month",
            "workload.concurrency",
        ],
        "workload.model=qwen2.5-7b constraints.budget_cny_month=3500.0 workload.concurrency=40",
    );
    // A size alone after a named model: that family at that size.
    f(
        &["Llama-3.1-8B 微调", "那 405B 的呢"],
        &["workload.model", "workload.task"],
        "workload.model=llama-3.1-405b workload.task=lora",
    );
    // A load said as daily users doubles as daily users (5 % of them at once).
    f(
        &["部署 Qwen2.5-7B，日活 1 万", "日活翻倍呢"],
        &["workload.concurrency"],
        "workload.concurrency=1000",
    );
    // Slices declined stay declined.
    f(
        &[
            "别推荐切片，我要独占整卡，跑 Qwen2.5-1.5B",
            "那 Qwen2.5-0.5B 呢",
        ],
        &["recommendation.gpu"],
        "recommendation.gpu=t4",
    );
    // A relative budget is relative to the last one.
    f(
        &["部署 Qwen2.5-14B，月预算 2500", "预算再多给 1000 呢"],
        &["constraints.budget_cny_month"],
        "constraints.budget_cny_month=3500.0",
    );
    // The batch of a training job.
    f(
        &["全参微调 Qwen2.5-1.5B", "micro batch 调到 4"],
        &["workload.task", "workload.micro_batch"],
        "workload.task=full workload.micro_batch=4",
    );
    // A declined card leaves the answer and the search.
    f(
        &["Llama-3.1-70B 跑在 4090 上行吗", "那就不用 4090，换个方案"],
        &["intent", "constraints.gpu", "recommendation.gpu"],
        "intent=recommend constraints.gpu=- recommendation.gpu=v100s-32g",
    );
}

#[test]
fn a_language_request_answers_the_last_question_again_in_that_language() {
    let f = |turns: &[&str], expected: &str| {
        assert_eq!(
            fields(turns, &["lang", "intent", "workload.model"]),
            expected,
            "{turns:?}"
        );
    };
    f(
        &["Qwen2.5-14B 推理要什么卡", "能用英语回复吗"],
        "lang=en intent=recommend workload.model=qwen2.5-14b",
    );
    f(
        &["Which card for Llama-3.1-8B?", "中文回答吧"],
        "lang=zh intent=recommend workload.model=llama-3.1-8b",
    );
    // The language asked for holds for the turns after.
    f(
        &["部署 Qwen2.5-7B", "reply in English", "并发 20 呢"],
        "lang=en intent=recommend workload.model=qwen2.5-7b",
    );
    // An FAQ again, with its topic.
    assert_eq!(
        fields(
            &["NVLink 有必要吗", "in English please"],
            &["lang", "intent", "topics"]
        ),
        "lang=en intent=faq topics=[\"nvlink\"]"
    );
}

#[test]
fn a_machine_turned_down_leaves_the_offers_by_the_card() {
    let cat = &advisor().catalog;
    let machine = cat
        .offers
        .iter()
        .find(|o| o.gpu == "h100-sxm" && o.unit == crate::advisor::catalog::Unit::Machine)
        .expect("an H100 machine offer");
    let by_card = cat
        .offers
        .iter()
        .find(|o| o.gpu == "h100-sxm" && o.unit != crate::advisor::catalog::Unit::Machine)
        .expect("an H100 offer by the card");
    let shows = |q: &str, o: &crate::advisor::catalog::Offer| {
        let (a, _) = advisor().answer(q, &State::default());
        a.reply()
            .contains(&crate::advisor::reply::money(o.price.min))
    };
    let declined = "what's an h100 per month? single card, not the whole node";
    assert!(shows(declined, by_card) && !shows(declined, machine));
    let zh = "H100 不要整机，单卡多少钱";
    assert!(shows(zh, by_card) && !shows(zh, machine));
    // Asked for, the machine alone.
    assert!(shows("H100 整机多少钱", machine) && !shows("H100 整机多少钱", by_card));
}

#[test]
fn a_card_without_bf16_is_no_for_training_whatever_its_memory() {
    let (a, _) = advisor().answer(
        "V100S 上做 Qwen2.5-7B 的 LoRA 微调，一张 32G 够不够？",
        &State::default(),
    );
    let v = a.verdict.clone().expect("a verdict");
    assert!(!v.fits);
    assert!(v.needed_gb < 0.95 * v.available_gb, "the memory alone fits");
    assert!(a.reply().contains("BF16"), "{}", a.reply());
    // The same workload on a card with BF16 fits.
    let (a, _) = advisor().answer(
        "A100 40G 上做 Qwen2.5-7B 的 LoRA 微调，一张够不够？",
        &State::default(),
    );
    assert!(a.verdict.expect("a verdict").fits);
}

#[test]
fn the_cpu_servers_priced_from_the_catalog() {
    let (a, _) = advisor().answer(
        "你们洛杉矶那台 CPU 服务器多少钱一个月？想配合 GPU 机做数据预处理。",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Price);
    for c in &advisor().catalog.billing.cpu_server {
        assert!(
            a.reply().contains(&format!("${:.2}", c.usd_month)),
            "{}",
            a.reply()
        );
    }
    // CPU cores added to a GPU offer are that offer's add-on, not a CPU server.
    let (a, _) = advisor().answer(
        "A100 40G 单卡，CPU 升到 16 核，月费多少？",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Price);
    assert!(a.reply().contains("16"), "{}", a.reply());
    assert!(!a.reply().contains("E5-2620"), "{}", a.reply());
}

#[test]
fn a_configuration_asked_for_outright_is_a_recommendation() {
    for q in [
        "模型定了 Qwen2.5-14B，高峰 100 人同时在用。之前群里有人说单张 4090 就够了，我们有点怀疑。请给出推荐配置和月费。",
        "Our box is a single 3090 running Mistral-7B for 50 users at once. Could you size this properly for us? How many cards, which type?",
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent, Intent::Recommend, "{q}");
    }
    // Without the ask, the card with its "够吗" is a feasibility question.
    let (a, _) = advisor().answer("单张 4090 跑 Qwen2.5-14B 够吗", &State::default());
    assert_eq!(a.intent, Intent::Feasibility);
}

#[test]
fn a_question_about_how_the_rental_is_used_is_answered_by_the_faq() {
    for (q, topic) in [
        (
            "我们打算租一台 8 卡 A100 80G 整机，白天跑 Qwen2.5-7B 的在线推理，晚上同一台机器做 LoRA 训练。这种用法有没有问题？",
            "pitfall-one-machine-both",
        ),
        (
            "我们租的是 4 张 A100 40G，跑 7B 模型的在线推理，GPU 利用率一直 20%，是不是配置过剩？要不要降配？",
            "monitoring",
        ),
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent, Intent::Faq, "{q}");
        assert!(a.topics.iter().any(|t| t == topic), "{q}: {:?}", a.topics);
    }
}

#[test]
fn cards_compared_with_their_counts_are_priced_as_configurations() {
    let (a, _) = advisor().answer(
        "2 张 A100 40G 和 4 张 3090，哪个月租便宜？",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Compare);
    let price = |gpu: &str| {
        let o = advisor().catalog.offer_for_gpu(gpu).expect("offer");
        o.price.max / o.cards_per_unit as f64
    };
    for (gpu, n) in [("a100-40g", 2.0), ("rtx3090", 4.0)] {
        let total = crate::advisor::reply::money(price(gpu) * n);
        assert!(a.reply().contains(&total), "{total} in {}", a.reply());
    }
    // The rented 3090s come over PCIe (DOMAIN.md §6), whatever bridge the board takes.
    assert!(!a.reply().contains("NVLink bridge"), "{}", a.reply());
    // Without counts, no configuration prices.
    let (b, _) = advisor().answer("A100 40G 和 3090 怎么选", &State::default());
    assert!(!b.reply().contains("更便宜"), "{}", b.reply());
}

#[test]
fn a_question_about_the_service_beside_a_workload_is_answered_by_the_faq() {
    for (q, topic) in [
        (
            "下个月要全参训练 Qwen2.5-7B，原始语料大概 2TB，存储怎么配？训练中间的 checkpoint 放系统盘还是数据盘？",
            "storage",
        ),
        (
            "背景：我们做跨境电商客服，模型是 Llama-3.1-8B，只做推理。想问新加坡节点和洛杉矶节点怎么选？延迟大概多少？",
            "network",
        ),
        (
            "We'll LoRA fine-tune Mistral-7B next month. Besides the GPU rent, are there setup fees or bandwidth overages?",
            "hidden-fees",
        ),
        // A clause with no topic of its own beside one that has one.
        (
            "实例 ssh 连不上 40 分钟了，上面在跑 Qwen2.5-32B 的 LoRA。故障迁移怎么算？数据会不会丢？",
            "migration",
        ),
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent, Intent::Faq, "{q}");
        assert_eq!(a.topics.first().map(String::as_str), Some(topic), "{q}");
    }
    // Asked for a configuration, the price of the workload, or a card's topic: the
    // recommendation, with the topic beside it.
    for q in [
        "帮我推荐个配置跑 Qwen-7B，另外有香港节点吗？",
        "Qwen-14B 推理，50 人并发，按月付多少钱？",
        "Qwen-72B 推理，NVLink 有必要吗？",
        "模型用 Qwen3-8B，高峰 60 人同时在线，咋配比较稳？另外按月还是按年划算？",
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent, Intent::Recommend, "{q}");
    }
    // A serving metric's "延迟" is the serving's: the answer keeps its serving estimate.
    let (a, _) = advisor().answer(
        "一张 A100 40G 用 vLLM 跑 Llama-3.1-8B-Instruct，单个请求输入约 2.86 万 token，首 token 延迟（TTFT）大概多少秒？",
        &State::default(),
    );
    assert_ne!(a.intent, Intent::Faq);
    assert!(a.serving.is_some());
}

#[test]
fn the_cheapest_configuration_after_a_verdict_is_over_every_card() {
    let turns = [
        "Qwen2.5-72B-Instruct in bf16 on 4x A100 40GB — enough?",
        "ok then what's the cheapest config that runs it in bf16 with proper headroom?",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend);
    let r = a.recommendation.expect("a recommendation");
    // Over every card: the cheapest fit with headroom, not the four A100 40G at 99 %.
    let on_a100 = r.offer.starts_with("a100-40g") && r.count == 4;
    assert!(!on_a100, "{} × {}", r.offer, r.count);
    // With nothing to size, cheap cards asked for are the price list.
    let (a, _) = advisor().answer("便宜的卡推荐下", &State::default());
    assert_eq!(a.intent, Intent::Price);
}

#[test]
fn the_card_of_the_last_answer_referred_to_and_a_requirement_added_later() {
    // "could it run …" after a slice's price: the verdict on that slice, with its memory.
    check(
        &[
            "What does an A16 slice cost?",
            "could it run Qwen2.5-0.5B-Instruct for a tiny FAQ bot?",
        ],
        "feasibility a16-slice-1-16×1 bf16 fits | ",
    );
    let (a, _) = {
        let (_, s) = advisor().answer("What does an A16 slice cost?", &State::default());
        advisor().answer("could it run Qwen2.5-7B-Instruct?", &s)
    };
    let v = a.verdict.expect("a verdict");
    assert!(!v.fits && v.available_gb < 16.0, "{v:?}");
    // Domestic hardware required after a recommendation: the recommendation on it.
    let turns = [
        "We'd like to run DeepSeek-V3 for an internal assistant. What do we need?",
        "Forgot to say: it has to run on Chinese domestic hardware (Ascend) for compliance.",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend);
    let r = a.recommendation.expect("a recommendation");
    assert!(r.offer.starts_with("ascend"), "{}", r.offer);
}

#[test]
fn a_follow_up_keeps_the_task_lifts_a_requirement_and_spreads_a_total() {
    let f = check_fields;
    // "能跑吗" on another card runs the fine-tuning asked before; "部署呢" serves.
    f(
        &[
            "全参 llama3.2-1B 最便宜啥卡，seq 2048 bs1",
            "我手上只有一张 4090，能跑吗",
        ],
        &["intent", "workload.task", "verdict.gpu"],
        "intent=feasibility workload.task=full verdict.gpu=rtx4090",
    );
    f(
        &["Qwen2.5-7B LoRA 要什么卡", "部署呢"],
        &["workload.task"],
        "workload.task=inference",
    );
    // A domestic requirement lifted takes the domestic card it named with it.
    f(
        &[
            "单位要求国产化，昇腾上 lora Qwen2.5-72B 要几张 910B",
            "如果不限国产呢",
        ],
        &["constraints.domestic", "constraints.gpu"],
        "constraints.domestic=false constraints.gpu=-",
    );
    // A total said before the rental's length is spread over the months said next.
    f(
        &[
            "we got a grant, 60k RMB total for compute",
            "it has to last 6 months, mostly LoRA on 7-14B models",
        ],
        &["constraints.budget_cny_month", "constraints.months"],
        "constraints.budget_cny_month=10000.0 constraints.months=6.0",
    );
    // The seats of a service desk are its users at once.
    f(
        &[
            "客服机器人用 Qwen2.5-7B，50 个人同时用，推荐什么卡",
            "坐席要扩到 120 个，预算每月不超过1万，怎么配",
        ],
        &["workload.concurrency", "constraints.budget_cny_month"],
        "workload.concurrency=120 constraints.budget_cny_month=10000.0",
    );
}

#[test]
fn totals_spread_again_counts_asked_of_the_last_workload_and_relaxed_latency() {
    let f = check_fields;
    // A total over 6 months, then 9 months with the same money.
    f(
        &[
            "We have 90k RMB total for a 6-month pilot and want to serve Qwen2.5-14B to ~25 concurrent users.",
            "Pilot got extended to 9 months, same total money.",
        ],
        &["constraints.budget_cny_month", "constraints.months"],
        "constraints.budget_cny_month=10000.0 constraints.months=9.0",
    );
    // A monthly budget is a rate: a longer rental leaves it.
    f(
        &["预算每月 9000，Qwen2.5-7B 推理", "租 6 个月"],
        &["constraints.budget_cny_month"],
        "constraints.budget_cny_month=9000.0",
    );
    // The 月 of "三个月的项目" is the rental's, not the money's period.
    f(
        &["想lora一个14b", "三个月的项目 总共预算9000"],
        &["constraints.budget_cny_month", "workload.task"],
        "constraints.budget_cny_month=3000.0 workload.task=lora",
    );
    // "how many cards is that" after a load: the recommendation for it.
    f(
        &[
            "need to serve llama 3.1 8b for my app, about 2000 daily users",
            "how many cards is that",
        ],
        &["intent", "workload.concurrency"],
        "intent=recommend workload.concurrency=100",
    );
    // A count of the card asked about before.
    f(
        &["yi 34b q8 on a single a100 40gb?", "ok 2 of them then"],
        &["intent", "verdict.count", "verdict.fits"],
        "intent=feasibility verdict.count=2 verdict.fits=true",
    );
    // A QPS with each request's seconds (Little's law), daily colleagues at 5 %.
    f(
        &["打算用 SGLang 部署 Qwen2.5-32B-Instruct-AWQ，peak QPS 2 左右，平均一个请求 15s，context 8k，租啥卡合适？"],
        &["workload.concurrency", "serving.engine"],
        "workload.concurrency=30 serving.engine=sglang",
    );
    f(
        &["想部署 Llama-3.1-8B-Instruct 當內部客服助理，每天大概 400 位同事會用，要租哪一種顯卡？"],
        &["workload.concurrency"],
        "workload.concurrency=20",
    );
    // The other memory size of the card asked about.
    f(
        &["A100 40G 月租多少", "and the 80G version?"],
        &["intent", "constraints.gpu"],
        "intent=price constraints.gpu=a100-80g",
    );
    f(
        &["A100 40G 能跑 32B 吗", "那 80G 的呢"],
        &["intent", "verdict.gpu", "verdict.fits"],
        "intent=feasibility verdict.gpu=a100-80g verdict.fits=true",
    );
    // A size no card of the family has changes nothing.
    f(
        &["4090 月租多少", "那 48G 的呢"],
        &["constraints.gpu"],
        "constraints.gpu=-",
    );
    // Latency that does not matter: the queue worked through by one configuration.
    f(
        &[
            "Serving Qwen2.5-32B-Instruct for 60 concurrent analysts, 4k context. What do we need?",
            "Latency isn't critical, it's overnight batch report generation. Does that change anything?",
        ],
        &["workload.concurrency", "serving.replicas"],
        "workload.concurrency=60 serving.replicas=1",
    );
}

#[test]
fn a_series_declined_amounts_in_euros_and_grand_bare_follow_ups_and_why_questions() {
    let f = check_fields;
    // "no H-series" declines every Hopper card.
    f(
        &[
            "We want to deploy DeepSeek R1 671B, the full version, what config do we need?",
            "no H-series please, what else can do it?",
        ],
        &["intent", "recommendation.gpu"],
        "intent=recommend recommendation.gpu=a100-80g",
    );
    f(
        &["Our budget is €800 a month. What GPU setup can we get for that?"],
        &["intent", "constraints.budget_cny_month"],
        "intent=budget constraints.budget_cny_month=6560.0",
    );
    f(
        &["budget is about 2 grand USD a month, what can we get"],
        &["constraints.budget_cny_month"],
        "constraints.budget_cny_month=14400.0",
    );
    // A total for the semester, whatever the next sentence's "per month".
    f(
        &["I have a $3,000 budget for the whole semester (4 months). What can I rent per month with that?"],
        &["constraints.budget_cny_month", "constraints.months"],
        "constraints.budget_cny_month=5400.0 constraints.months=4.0",
    );
    // Bare follow-ups: an amount, a count at once, what to rent, how long.
    f(
        &["what can I get for 1000 cny a month", "and for 3k?"],
        &["intent", "constraints.budget_cny_month"],
        "intent=budget constraints.budget_cny_month=3000.0",
    );
    f(
        &[
            "yi-34b inference",
            "total context around 6k tokens",
            "10 at the same time",
        ],
        &["intent", "workload.concurrency", "workload.context_tokens"],
        "intent=recommend workload.concurrency=10 workload.context_tokens=6144",
    );
    f(
        &[
            "we want llama 3.1 405b in-house",
            "fp8 weights",
            "what do we rent?",
        ],
        &["intent", "workload.precision"],
        "intent=recommend workload.precision=fp8",
    );
    f(
        &[
            "想全参微调 Qwen2.5-7B，数据 5 亿 token",
            "大概几个小时能跑完",
        ],
        &["intent", "workload.task"],
        "intent=recommend workload.task=full",
    );
    f(
        &[
            "DeepSeek-R1-Distill-Qwen-32B 部署",
            "思考链很长，上下文给 32k",
            "换成 14B 的蒸馏版呢",
        ],
        &["workload.model", "workload.context_tokens"],
        "workload.model=deepseek-r1-distill-qwen-14b workload.context_tokens=32768",
    );
    // Worth it over / costs more than: card against card; asked why first: the topic.
    f(
        &["is the H20 worth it over two 4090s? we run deepseek r1 distill 32b for a small team"],
        &["intent"],
        "intent=compare",
    );
    f(
        &["为什么大家都说选卡先看显存、不看算力？4090 的 FP16 算力比 A100 还高，那为啥 A100 还贵那么多"],
        &["intent"],
        "intent=faq",
    );
    // Training on a card without BF16, no model: the pitfall.
    f(
        &["Our cloud credits only cover T4s. Is it a bad idea to run LoRA training on those?"],
        &["intent", "topics"],
        r#"intent=faq topics=["pitfall-inference-card-training","pitfall-no-nvlink-multi-gpu"]"#,
    );
}

#[test]
fn tickets_with_owned_cards_a_years_total_and_a_why_in_a_later_sentence() {
    let f = check_fields;
    // "有几台 4090" says what the customer has; the question is whether it runs.
    f(
        &["您好，我们工作室有几台 4090 的机器，想拿来跑 llama3 70b 做内部问答，4bit 的。想问下 4090 跑这个到底行不行？"],
        &["intent", "verdict.gpu", "verdict.fits"],
        "intent=feasibility verdict.gpu=rtx4090 verdict.fits=false",
    );
    // A total for this year is spread over its twelve months.
    f(
        &["您好，我们今年租卡的总预算是 6 万，想了解一下平均每个月能租到什么。"],
        &["intent", "constraints.budget_cny_month"],
        "intent=budget constraints.budget_cny_month=5000.0",
    );
    // A price mentioned, then why asked: the topic's answer, not a price list.
    f(
        &["Hi, another provider quotes A100s at half your price. Why should we pick you?"],
        &["intent"],
        "intent=faq",
    );
    // Asked as a price with no why, it stays a price.
    f(
        &["What's the price of an A100?"],
        &["intent"],
        "intent=price",
    );
}

#[test]
fn training_knobs_as_config_keys_a_trillion_in_wan_yi_and_amount_follow_ups() {
    let f = check_fields;
    // Config keys with underscores, as they are pasted from a training config.
    f(
        &["Need to LoRA fine-tune Mistral 7B with sequence_len 4096 and micro_batch_size 2. What's the cheapest single GPU?"],
        &["workload.context_tokens", "workload.micro_batch"],
        "workload.context_tokens=4096 workload.micro_batch=2",
    );
    f(
        &["想 full finetune Llama-3.1-8B，8 卡 A100 40G，seq_len 4096，能跑吗？"],
        &["workload.task", "workload.context_tokens"],
        "workload.task=full workload.context_tokens=4096",
    );
    // 万亿 is a trillion.
    f(
        &["7B 模型从头预训练，语料 1.2 万亿 token，8 卡 H100 大概要跑多久？"],
        &["workload.train_tokens"],
        "workload.train_tokens=1200000000000.0",
    );
    // "make it" changes the amount; "the whole year" is a rental of twelve months.
    f(
        &[
            "budget 3000 RMB/month, what can I get?",
            "actually make it 6000",
        ],
        &["intent", "constraints.budget_cny_month"],
        "intent=budget constraints.budget_cny_month=6000.0",
    );
    f(
        &[
            "How much is a single RTX 3090 per month?",
            "and if we pay for the whole year?",
        ],
        &["intent", "constraints.months"],
        "intent=price constraints.months=12.0",
    );
    // An amount asked of an hourly offer is its price.
    f(
        &["H100 by the hour — what does that come to per hour in RMB?"],
        &["intent"],
        "intent=price",
    );
    f(
        &["Hi, how many A100s would it take to fine-tune DeepSeek-V3?"],
        &["intent"],
        "intent=recommend",
    );
}

#[test]
fn epochs_multiply_the_tokens_trained_on() {
    let f = check_fields;
    let q = "Qwen2.5-14B full finetune，1B tokens，8x A100 80G，要跑多久？";
    f(
        &[q],
        &["workload.train_tokens"],
        "workload.train_tokens=1000000000.0",
    );
    // As a follow-up, and in the same question.
    f(
        &[q, "那跑 3 个 epoch 呢？"],
        &["workload.train_tokens"],
        "workload.train_tokens=3000000000.0",
    );
    f(
        &["Qwen2.5-7B LoRA on 300M tokens, 2 epochs, which gpu?"],
        &["workload.train_tokens"],
        "workload.train_tokens=600000000.0",
    );
    let (a, _) = advisor().answer(
        "Qwen2.5-7B LoRA on 300M tokens, 2 epochs, which gpu?",
        &State::default(),
    );
    assert!(
        a.reply().contains("300M tokens × 2 epochs"),
        "{}",
        a.reply()
    );
    // Three times the tokens, three times the hours.
    let hours = |turns: &[&str]| {
        let mut state = State::default();
        let mut h = None;
        for t in turns {
            let (a, next) = advisor().answer(t, &state);
            state = next;
            h = a.estimate.as_ref().and_then(|e| e.train_hours);
        }
        h.unwrap_or(0.0)
    };
    let one = hours(&[q]);
    let three = hours(&[q, "那跑 3 个 epoch 呢？"]);
    assert!(
        one > 0.0 && (three / one - 3.0).abs() < 0.01,
        "{one} {three}"
    );
}

#[test]
fn a_model_trained_before_and_served_now_is_served() {
    let f = check_fields;
    f(
        &["After fine-tuning Llama-3.1-8B we'll serve about 200 concurrent users at 4k context. How many A100 40G do we need?"],
        &["workload.task", "workload.concurrency"],
        "workload.task=inference workload.concurrency=200",
    );
    f(
        &["Qwen2.5-7B 微调完要部署给 50 个客服同时用，要几张卡"],
        &["workload.task", "workload.concurrency"],
        "workload.task=inference workload.concurrency=50",
    );
    // Training asked as such stays training.
    f(
        &["fine-tune Llama-3.1-8B, then serve it, which gpu for the fine-tuning?"],
        &["workload.task"],
        "workload.task=lora",
    );
}

#[test]
fn an_amount_quoted_as_a_price_is_not_the_budget() {
    let f = check_fields;
    f(
        &["rent vs buy: an A100 40G is 2800 a month with you, right? at what point does buying one make more sense?"],
        &["intent", "constraints.budget_cny_month"],
        "intent=price constraints.budget_cny_month=-",
    );
    f(
        &["别家 A100 才一千多一个月，你们要 2800，差这么多是为啥"],
        &["intent", "constraints.budget_cny_month", "topics"],
        r#"intent=faq constraints.budget_cny_month=- topics=["pitfall-unit-price-only"]"#,
    );
    f(
        &["cheap t4s for fine tuning a 3b model theyre only 900 a month right"],
        &["workload.task", "constraints.budget_cny_month"],
        "workload.task=lora constraints.budget_cny_month=-",
    );
    // The customer's own amount stays a budget.
    f(
        &["we can pay 2800 a month, what can we rent?"],
        &["constraints.budget_cny_month"],
        "constraints.budget_cny_month=2800.0",
    );
}

#[test]
fn follow_ups_keep_the_card_the_engine_and_read_a_smaller_budget() {
    let f = check_fields;
    // A can-it follow-up is the verdict on the card said before; a GGUF quant named
    // after Ollama is Ollama's.
    f(
        &[
            "gemma 3 27b on a 3090 with ollama",
            "q4_k_m and like 20k context will it still fit",
        ],
        &["intent", "verdict.gpu", "serving.engine"],
        "intent=feasibility verdict.gpu=rtx3090 serving.engine=ollama",
    );
    f(
        &[
            "budget 5k rmb a month want to serve a 14b model",
            "ok what if i can only do 2000",
        ],
        &["constraints.budget_cny_month"],
        "constraints.budget_cny_month=2000.0",
    );
    f(
        &["ran deepseek r1 distill qwen 32b on my 4090 with ollama want to rent something to serve it to my team of 8 what do i get"],
        &["workload.concurrency"],
        "workload.concurrency=8",
    );
}

#[test]
fn a_team_size_for_a_served_model_and_a_context_word_that_is_not_a_length() {
    let f = check_fields;
    f(
        &["Qwen2.5-Coder-32B-Instruct for our dev team: 25 engineers, 16k context, mostly autocomplete. What would you rent?"],
        &["workload.concurrency", "workload.context_tokens"],
        "workload.concurrency=25 workload.context_tokens=16384",
    );
    // "so you have the context: we're at ~20k daily actives" gives no context length.
    f(
        &["pasting from our channel so you have the context: we're at ~20k daily actives, avg prompt ~1200 tokens, replies ~250 tokens, model is Mistral-7B-Instruct-v0.3"],
        &["workload.context_tokens", "workload.concurrency"],
        "workload.context_tokens=1450 workload.concurrency=1000",
    );
}

#[test]
fn the_capacity_of_a_named_configuration_is_asked_of_it() {
    let f = check_fields;
    f(
        &["8x A100 80GB with Qwen3-235B-A22B in bf16, max-model-len 32768: how many concurrent 1k-in/1k-out requests before latency goes bad?"],
        &["intent", "verdict.gpu", "serving.output_tokens"],
        "intent=feasibility verdict.gpu=a100-80g serving.output_tokens=1024",
    );
    // The speed on a card named without a count: that card's.
    f(
        &["vLLM 跑 Qwen2.5-7B，L40S 上一秒能出多少 token"],
        &["intent", "verdict.gpu"],
        "intent=feasibility verdict.gpu=l40s",
    );
    f(
        &["T4 上跑 chatglm3-6b 的 int4 量化版，16G 显存应该绰绰有余吧"],
        &["intent", "verdict.fits"],
        "intent=feasibility verdict.fits=true",
    );
}

#[test]
fn side_questions_leave_the_workload_and_comparisons_use_it() {
    let f = check_fields;
    // A topic asked in passing changes nothing: the LoRA stays LoRA, the card is not
    // taken as the one to size.
    f(
        &[
            "Qwen2.5-14B 做 lora 微调",
            "游戏卡做训练靠谱吗",
            "序列长度 4096 呢",
        ],
        &[
            "workload.task",
            "workload.context_tokens",
            "constraints.gpu",
        ],
        "workload.task=lora workload.context_tokens=4096 constraints.gpu=-",
    );
    f(
        &[
            "租 4 张 3090 跑 Qwen2.5-14B 推理",
            "你们的 3090 是不是矿卡啊",
        ],
        &["intent"],
        "intent=faq",
    );
    // The question goes on across it: a verdict stays a verdict, a quote a quote.
    f(
        &[
            "4张4090能跑 qwen2-72b-instruct-gptq-int4 吗",
            "另外问下，你们的4090是全新卡还是矿卡？",
            "那如果不用量化版，直接 bf16 呢",
        ],
        &["intent", "verdict.gpu", "verdict.fits"],
        "intent=feasibility verdict.gpu=rtx4090 verdict.fits=false",
    );
    f(
        &[
            "A100 40G 单卡一个月多少钱",
            "四卡呢",
            "顺便问下能开专票吗",
            "年付的话呢",
        ],
        &[
            "intent",
            "constraints.gpu",
            "constraints.gpu_count",
            "constraints.months",
        ],
        "intent=price constraints.gpu=a100-40g constraints.gpu_count=4 constraints.months=12.0",
    );
    // A plain "训练" keeps the method said before.
    f(
        &[
            "从头预训练一个 1B 的模型，数据 1000 亿 token",
            "能不能拿 4090 堆起来训",
        ],
        &["workload.task"],
        "workload.task=pretrain",
    );
    // Cards compared after a workload are compared for it.
    f(
        &[
            "我们要全量微调 Llama-3-8B",
            "数据大概 20 亿 token",
            "那 A100 80G 跟 H100 比呢",
        ],
        &["intent", "workload.task", "workload.train_tokens"],
        "intent=compare workload.task=full workload.train_tokens=2000000000.0",
    );
    // A card changed is still a change ("ok and on an a100 40g?").
    f(
        &["can a 3090 run qwen2.5 14b", "ok and on an a100 40g?"],
        &["intent", "verdict.gpu"],
        "intent=feasibility verdict.gpu=a100-40g",
    );
    // A configuration asked for after a verdict is a recommendation, on the card named.
    f(
        &[
            "Qwen3-32B 做推理服务，要租啥",
            "4090 跑得动吗",
            "那就 int4 跑，4090 推荐几张",
        ],
        &["intent", "constraints.gpu", "workload.precision"],
        "intent=recommend constraints.gpu=rtx4090 workload.precision=int4",
    );
    // How many of one card, after a recommendation: a configuration on that card.
    f(
        &["Qwen2.5-32B 全参微调要什么配置", "只考虑 H100 的话，要几台"],
        &["intent", "constraints.gpu", "workload.task"],
        "intent=recommend constraints.gpu=h100-sxm workload.task=full",
    );
    // Cards counted after a comparison are a verdict on the workload; a price asked in
    // between keeps it.
    f(
        &[
            "部署 Qwen3-235B-A22B，4 张 H20 能跑吗",
            "8 张 H20 显存一共多少",
            "H20 和 H200 怎么选",
            "那 4 张 H20 跑 FP8 版本呢",
        ],
        &["intent", "verdict.gpu", "workload.model"],
        "intent=feasibility verdict.gpu=h20 workload.model=qwen3-235b-a22b",
    );
    // A family named in a conversation about one of its models is that model.
    f(
        &[
            "Can I QLoRA Mixtral-8x7B on two 4090s?",
            "Then what single card would you rent for Mixtral QLoRA?",
        ],
        &["intent", "workload.model", "constraints.gpu"],
        "intent=recommend workload.model=mixtral-8x7b constraints.gpu=-",
    );
}

#[test]
fn a_configuration_settled_on_after_a_workload_is_quoted() {
    let ad = advisor();
    // No card named: the recommended configuration for the workload, priced for the
    // period, the workload kept.
    let a = last_answer(
        ad,
        &[
            "Llama 3.1 70B 做 LoRA 微调，用什么卡",
            "就按你推荐的配置来，租两个月多少钱",
        ],
    );
    assert_eq!(a.intent, Intent::Price);
    let w = a.workload.as_ref().expect("the workload stays");
    assert!((70.0..71.0).contains(&w.params_b), "{}", w.params_b);
    let c = a.recommendation.as_ref().expect("the configuration quoted");
    let total = money_range(c.monthly_cny.scale(2.0));
    assert!(a.reply().starts_with("**报价"), "{}", a.reply());
    assert!(a.reply().contains(&total), "{total} in {}", a.reply());
    // Cards and a count named: those cards, for that period.
    let a = last_answer(
        ad,
        &[
            "Thinking of 8x RTX 4090. Enough to hold a 70B at int4?",
            "Alright, book 8x 4090 for 2 months, what's the total?",
        ],
    );
    assert_eq!(a.intent, Intent::Price);
    assert_eq!(a.constraints.gpu_count, Some(8));
    assert_eq!(a.constraints.months, Some(2.0));
    // A card's price alone after a workload is still that card's price, not a quote.
    let a = last_answer(ad, &["Qwen2.5-7B 推理用什么卡", "H100 多少钱"]);
    assert_eq!(a.intent, Intent::Price);
    assert!(a
        .recommendation
        .as_ref()
        .is_none_or(|c| c.gpu.starts_with("h100")));
    // Nor is the KV cost of a slot a price.
    let a = last_answer(
        ad,
        &[
            "Running Qwen2.5-7B with vllm on one A100 40G",
            "What's the KV cost of each extra parallel slot?",
        ],
    );
    assert_ne!(a.intent, Intent::Price);
}

#[test]
fn a_speed_seen_on_a_named_configuration_is_measured_against_its_estimate() {
    // "Is that normal?" after a speed or first-token time on a card and a model: the
    // verdict on that configuration, with its serving estimate to compare against.
    for q in [
        "Two 8x H100 80GB nodes running DeepSeek-R1 (FP8) with SGLang: single-stream decode is only 19 tok/s. Is that normal?",
        "单张 A100 80G 跑 Llama-3.1-70B AWQ，context 16k，TTFT 要 15 秒左右，正常吗？",
    ] {
        let (a, _) = advisor().answer(q, &State::default());
        assert_eq!(a.intent, Intent::Feasibility, "{q}");
        assert!(a.serving.is_some(), "{q}");
    }
    // Without a figure seen, the same doubt about memory is the FAQ's.
    let (a, _) = advisor().answer(
        "vllm 一启动显存就被占了 90% 多，模型才 14B，这正常吗",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Faq);
    // The seconds a whole request takes, with a QPS, are Little's law's, not a
    // first-token target: 5 QPS × 8 s is 40 at once.
    let (a, _) = advisor().answer(
        "峰值 QPS ~5, 平均每个 request 8 秒返回完, qwen2.5-14b 需要几张卡?",
        &State::default(),
    );
    let w = a.workload.as_ref().expect("workload");
    assert_eq!(w.concurrency, 40);
}

#[test]
fn forms_of_one_card_a_full_disk_and_a_period_settled_on() {
    // One card's two forms set against each other: the topic that tells them apart.
    let a = last_answer(
        advisor(),
        &["A100 PCIe vs SXM: does NVLink actually matter if I'm only doing 4-GPU DDP on a 7B?"],
    );
    assert_eq!(a.intent, Intent::Faq);
    assert!(a.topics.iter().any(|t| t == "nvlink"), "{:?}", a.topics);
    // A full disk beside the model being downloaded: the storage answer.
    let a = last_answer(advisor(), &["data disk 满了，download Qwen2.5-72B 的权重报 No space left on device，能 resize 吗？扩容怎么收费"]);
    assert_eq!(a.intent, Intent::Faq);
    assert!(a.topics.iter().any(|t| t == "storage"), "{:?}", a.topics);
    // A rental period settled on after a workload: the quote for that period.
    let a = last_answer(
        advisor(),
        &[
            "想租两张 A100 40G 做 Qwen2.5-14B 的 LoRA，先租一个月",
            "算了，直接包三个月",
        ],
    );
    assert_eq!(a.intent, Intent::Price);
    assert_eq!(a.constraints.months, Some(3.0));
}

#[test]
fn how_memory_is_worked_out_and_a_card_not_offered() {
    // A rule of thumb quoted in a question about the formula is an example, not a workload.
    let (a, _) = advisor().answer(
        "显存到底怎么估算？看到说1B参数fp32要4G，有没有公式",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Faq);
    assert!(a.topics.iter().any(|t| t == "formula"), "{:?}", a.topics);
    // With a configuration asked beside it, the configuration.
    let (a, _) = advisor().answer(
        "What GPU setup do I need for full-parameter DPO on Qwen-7B? Is there a formula for working out the GPU count?",
        &State::default(),
    );
    assert_eq!(a.intent, Intent::Recommend);
    // A card said not to be on offer is not the card asked about.
    let (_, state) = advisor().answer("H200 or H100 for DeepSeek-R1?", &State::default());
    let (a, _) = advisor().answer(
        "H200 isn't on your list I guess. so what's the cheapest way you can actually host full R1?",
        &state,
    );
    assert_eq!(a.intent, Intent::Recommend);
    assert_ne!(
        a.recommendation.as_ref().map(|r| r.gpu.as_str()),
        Some("h200")
    );
}

#[test]
fn a_budget_asked_again_after_a_side_question_and_a_domestic_rule_dropped() {
    // A side question between the budget and what it gets keeps the budget.
    let a = last_answer(
        advisor(),
        &[
            "每月预算一万五，不限定模型，就想知道能租到什么",
            "可以开发票吧",
            "那一万五以内，显存最大的是哪种方案",
        ],
    );
    assert_eq!(a.intent, Intent::Budget);
    assert_eq!(a.constraints.budget_cny_month, Some(15000.0));
    // An amount the question is asked at changes the budget.
    let a = last_answer(
        advisor(),
        &[
            "Budget is 3000 CNY a month, what can I get?",
            "what if I stretch it to 6000?",
            "at 6000, what's the most VRAM per card I can have?",
        ],
    );
    assert_eq!(a.intent, Intent::Budget);
    assert_eq!(a.constraints.budget_cny_month, Some(6000.0));
    // "No requirement for domestic hardware" lifts it rather than asking for it.
    let a = last_answer(
        advisor(),
        &[
            "We have 50k CNY per month for a training cluster",
            "no requirement for domestic hardware",
            "which machine does that get us?",
        ],
    );
    assert_eq!(a.intent, Intent::Budget);
    assert!(!a.constraints.domestic);
}

#[test]
fn a_refund_asked_after_a_quote_and_the_money_of_a_workload_asked_again() {
    // Whether the money comes back is the billing policy's, not another quote.
    let a = last_answer(
        advisor(),
        &[
            "4 张 A100 40G 跑 Qwen2.5-72B 的 AWQ，月付多少钱",
            "年付能便宜多少",
            "要是年付之后项目中途黄了，剩下的钱能退吗",
        ],
    );
    assert_eq!(a.intent, Intent::Faq);
    // "For that money" after a workload and its budget: the recommendation within it.
    let a = last_answer(
        advisor(),
        &[
            "We have roughly $800 a month for GPUs",
            "mostly to run 7B-13B models for internal tools",
            "what's the best you can do for that money?",
        ],
    );
    assert_eq!(a.intent, Intent::Recommend);
    assert_eq!(a.constraints.budget_cny_month, Some(5760.0));
}

#[test]
fn side_questions_about_other_cards_and_whys_leave_the_conversation_as_it_was() {
    // Others' claim about a card, then a change of method: the recommendation again.
    let turns = [
        "想全参微调 Qwen2.5-1.5B，cutoff_len 2048，租什么配置？",
        "People say fine-tuning on several 4090s together is slow. True?",
        "那换成 LoRA 呢",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend, "{turns:?}");
    assert_eq!(
        a.workload.as_ref().map(|w| w.task),
        Some(crate::advisor::workload::Task::Lora)
    );
    // A why about a speed seen on another card is the topic's question.
    let turns = [
        "We serve Qwen2.5-14B for one user at a time, 4k context. Which card?",
        "为什么我们在 3090 上生成才 9 token/s，是显存带宽的问题吗？",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Faq, "{turns:?}");
    assert!(
        a.topics.iter().any(|t| t == "hbm-bandwidth"),
        "{:?}",
        a.topics
    );
    // A context shrunk after a side question.
    let turns = [
        "GLM-4-9B-Chat 部署，要支持 128k 长文本，就一个用户在用",
        "Is CUDA preinstalled?",
        "上下文缩到 16k 的话呢",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend, "{turns:?}");
    assert_eq!(a.workload.as_ref().map(|w| w.context_tokens), Some(16384));
}

#[test]
fn the_providers_cards_asked_about_in_passing_leave_the_workload_and_its_question() {
    // A question of the provider's machines between a workload and its change.
    let turns = [
        "全量微调 Qwen2.5-7B，序列 2048，要租什么？",
        "Are your A100s SXM or PCIe, and is there NVLink between the cards?",
        "那 batch 开到 2 呢",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend, "{turns:?}");
    let turns = [
        "Continue pretraining Qwen2.5-14B on our corpus, 4k sequence length, about 5B tokens.",
        "Is your 8x H100 a single node with NVLink inside?",
        "And if the corpus grows to 20B tokens?",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend, "{turns:?}");
    // A precision changed after a price asked in passing: the verdict on the card.
    let turns = [
        "Can a T4 run Qwen2.5-7B-Instruct with AWQ 4-bit?",
        "Is your T4 price per card or per machine?",
        "What about unquantized fp16 on that same T4?",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Feasibility, "{turns:?}");
    assert_eq!(a.verdict.as_ref().map(|v| v.fits), Some(false));
}

#[test]
fn training_declined_in_any_wording_is_inference() {
    for q in [
        "Qwen2.5-7B，上下文 4k，不需要训练，租什么卡",
        "Qwen2.5-7B，上下文 4k，唔使訓練，淨係推理，租邊張卡",
    ] {
        let a = last_answer(advisor(), &[q]);
        assert_eq!(
            a.workload.as_ref().map(|w| w.task),
            Some(crate::advisor::workload::Task::Inference),
            "{q}"
        );
    }
    let a = last_answer(advisor(), &["要训 13B，租什么卡"]);
    assert_eq!(
        a.workload.as_ref().map(|w| w.task),
        Some(crate::advisor::workload::Task::Full)
    );
}

#[test]
fn a_why_asked_of_the_last_answer_goes_on_from_its_workload() {
    // "why not a 4090?": the verdict on that card for the workload answered.
    let turns = [
        "Yi-34B chat inference in bf16, what should I rent?",
        "why not a 4090? isn't it faster?",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Feasibility, "{turns:?}");
    assert_eq!(a.verdict.as_ref().map(|v| v.gpu.as_str()), Some("rtx4090"));
    assert_eq!(
        a.workload.as_ref().and_then(|w| w.model.as_deref()),
        Some("yi-34b")
    );
    // "why so many GPUs?": the recommendation again, its memory the reason.
    let turns = [
        "LoRA 微调 Qwen2.5-72B，推荐什么配置？",
        "why so many GPUs for LoRA? the adapters are tiny",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Recommend, "{turns:?}");
    assert_eq!(a.workload.as_ref().map(|w| w.params_b > 70.0), Some(true));
    // Without a workload answered before, a why is the topic's question.
    let a = last_answer(advisor(), &["why not a 4090?"]);
    assert_ne!(a.intent, Intent::Feasibility);
}

#[test]
fn how_long_a_training_plan_takes_on_cards_named_is_their_verdict_with_its_hours() {
    let turns = [
        "I want to pretrain a 3B model from scratch on 300B tokens.",
        "How long would that take on 8x A100 40GB, and roughly what would it cost?",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Feasibility, "{turns:?}");
    assert_eq!(a.verdict.as_ref().map(|v| v.gpu.as_str()), Some("a100-40g"));
    assert!(a
        .estimate
        .as_ref()
        .and_then(|e| e.train_hours)
        .is_some_and(|h| h > 1000.0));
}

#[test]
fn cantonese_money_words_and_a_requirement_not_insisted_on() {
    // 几钱 is 多少钱; 抵啲 asks which is worth it; 唔系一定要用国产 lifts the requirement.
    let a = last_answer(
        advisor(),
        &["租部 8 卡 A100 80G 嘅機，包年嘅話一個月幾錢？"],
    );
    assert_eq!(a.intent, Intent::Price);
    assert_eq!(a.constraints.months, Some(12.0));
    let a = last_answer(advisor(), &["昇騰910B同A100邊個抵啲？我哋唔係一定要用國產"]);
    assert_eq!(a.intent, Intent::Compare);
    assert!(!a.constraints.domestic);
}

#[test]
fn whether_annual_is_wise_and_a_card_rented_by_the_hour_for_the_workload() {
    // Whether paying a year is wise: the pitfall of the commitment, not a price.
    let turns = [
        "两张 A100 40G，跑一个大概半年的项目",
        "直接签一年年付是不是最划算？",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Faq, "{turns:?}");
    assert!(a.topics.iter().any(|t| t == "pitfall-annual-contract"));
    // "按小时租" says how the card is rented, not a price asked.
    let turns = [
        "Want to trial Qwen3-32B for about a week before committing.",
        "按小时租一张 H100 能跑 bf16 吗？",
    ];
    let a = last_answer(advisor(), &turns);
    assert_eq!(a.intent, Intent::Feasibility, "{turns:?}");
    assert_eq!(a.verdict.as_ref().map(|v| v.gpu.as_str()), Some("h100-sxm"));
}

#[test]
fn beliefs_about_cards_and_moves_between_them_are_the_topics_answer() {
    // A belief about how cards relate, or what a move would gain: the topic, which does not
    // adopt it.
    let a = last_answer(
        advisor(),
        &["H100 跑 7B 跟 3090 其实差不多快吧？那花这么多钱图啥"],
    );
    assert_eq!(a.intent, Intent::Faq);
    assert!(a.topics.contains(&"pitfall-small-model-h100".to_string()));
    let a = last_answer(
        advisor(),
        &["现在 8 张 A100 跑一轮 SFT 要 30 个小时，换成 H100 能快多少？租金贵了好几倍，值不值"],
    );
    assert_eq!(
        (a.intent, a.topics.join(",")),
        (Intent::Faq, "upgrade-h100".to_string())
    );
    // A belief about one card is that card's verdict; two cards set against each other
    // are compared.
    let a = last_answer(
        advisor(),
        &["Gemma 3 27B is only 27B, so it should fit unquantized on a single 4090, right?"],
    );
    assert_eq!(a.intent, Intent::Feasibility);
    assert!(a.verdict.is_some_and(|v| !v.fits));
    let a = last_answer(
        advisor(),
        &["The H20 is just a cut-down H100 with the same 80GB, right? H20 vs H100 for inference?"],
    );
    assert_eq!(a.intent, Intent::Compare);
}

#[test]
fn copies_for_a_load_hold_what_one_copy_holds_and_split_within_a_machine() {
    // A card the customer has that cannot hold the model is left by the load's pick too;
    // the configurations a load needs are copies, each card holding one copy's share.
    let a = last_answer(
        advisor(),
        &["本地只有一张 4090 做测试，原版根本跑不动。想租卡部署 Qwen2.5-72B-Instruct，BF16，高峰 20 人同时用，上下文 8k，租什么配置？"],
    );
    let r = a.recommendation.expect("a recommendation");
    assert_ne!(r.gpu, "rtx4090");
    assert!(
        r.per_card_gb * 1.2 <= r.vram_gb / f64::from(r.count),
        "{r:?}"
    );
    let s = a.serving.expect("a serving block");
    assert!(s.count <= 8, "one copy is split within one machine: {s:?}");
}
