use crate::advisor::fixtures::advisor;

/// What the parser reads from `question`: the fields of `Asked` that were stated, the
/// cues and topics, as one line ("k=v" joined by spaces, in a fixed order).
fn check(question: &str, expected: &str) {
    let p = advisor()
        .parser
        .parse(question, advisor().catalog.billing.usd_cny);
    let a = &p.asked;
    let mut got: Vec<String> = Vec::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            got.push(format!("{k}={v}"));
        }
    };
    put("lang", p.lang.map(|l| l.id().to_string()));
    put("gpus", (!a.gpus.is_empty()).then(|| a.gpus.join(",")));
    put("count", a.gpu_count.map(|n| n.to_string()));
    put(
        "plural",
        (a.cards_plural && a.gpu_count.is_none()).then(|| "yes".to_string()),
    );
    put("model", a.model.clone());
    put("size", a.size_b.map(|s| s.to_string()));
    put("active", a.active_b.map(|s| s.to_string()));
    put("task", a.task.map(|t| format!("{t:?}").to_lowercase()));
    put("precision", a.precision.map(|p| p.id().to_string()));
    put("context", a.context.map(|c| c.to_string()));
    put("concurrency", a.concurrency.map(|c| c.to_string()));
    put("budget", a.budget_cny.map(|b| b.to_string()));
    put("months", a.months.map(|m| m.to_string()));
    put("tokens", a.train_tokens.map(|t| t.to_string()));
    let s = &a.serving;
    put("output", s.output_tokens.map(|t| t.to_string()));
    put("daily", s.daily_users.map(|t| t.to_string()));
    put(
        "qps",
        s.qps.map(|t| {
            if t.fract() == 0.0 {
                t.to_string()
            } else {
                format!("{t:.3}")
            }
        }),
    );
    put("day_req", s.daily_requests.map(|t| t.to_string()));
    put("hours", s.active_hours.map(|t| t.to_string()));
    put("ttft", s.ttft_target_s.map(|t| t.to_string()));
    put("speed", s.speed_target.map(|t| t.to_string()));
    put("invalid", p.invalid.as_ref().map(|i| format!("{i:?}")));
    let cues: Vec<&str> = p.cues.iter().map(|c| c.id()).collect();
    put("cues", (!cues.is_empty()).then(|| cues.join(",")));
    put("topics", (!p.topics.is_empty()).then(|| p.topics.join(",")));
    // Writing a new case: "?" prints the parse to put in, and fails until it is put in.
    assert_ne!(expected, "?", "{question:?} parses as: {}", got.join(" "));
    assert_eq!(got.join(" "), expected, "{question:?}");
}

#[test]
fn cards_with_their_counts() {
    check(
        "两张 A100 跑 Qwen-14B 推理",
        "lang=zh gpus=a100-40g count=2 model=qwen-14b task=inference cues=feasibility",
    );
    check(
        "8xH100 能训 70B 吗",
        "lang=zh gpus=h100-sxm count=8 size=70 task=full cues=feasibility",
    );
    check(
        "two 3090s for a 13B model?",
        "lang=en gpus=rtx3090 count=2 size=13",
    );
}

#[test]
fn a_card_name_is_not_a_model_size() {
    check(
        "910B 能跑 7B 吗",
        "lang=zh gpus=ascend-910b size=7 task=inference cues=feasibility",
    );
}

#[test]
fn each_number_is_one_slot() {
    check(
        "Qwen-7B，4 路并发，8k 上下文",
        "lang=zh model=qwen-7b context=8192 concurrency=4 topics=concurrency",
    );
    check(
        "预算三千五，租半年",
        "lang=zh budget=3500 months=6 cues=budget",
    );
    // Dollars at the catalog's exchange rate (7.2).
    check(
        "$500 a month, what can I rent",
        "lang=en budget=3600 cues=feasibility,budget",
    );
}

#[test]
fn what_cannot_be_right_is_refused() {
    check(
        "-7B 模型推理",
        "lang=zh task=inference invalid=NegativeSize(7.0)",
    );
    check("50000B 的模型", "lang=zh invalid=HugeSize(50000.0)");
    check("", "");
}

#[test]
fn money_in_any_phrasing_and_period() {
    check("一个月顶多 4k", "lang=zh budget=4000");
    check("每个月能出三千出头", "lang=zh budget=3000");
    check("2万3 的预算", "lang=zh budget=23000 cues=budget");
    // A yearly amount is a twelfth of it a month; "全年" is not a rental period here.
    check(
        "全年 9 万 6 的预算",
        "lang=zh budget=8000 months=12 cues=budget",
    );
    check(
        "annual budget of 60k yuan",
        "lang=en budget=5000 months=12 cues=budget,annual topics=billing",
    );
    // A comma ends the money's period: the year is the rental period.
    check(
        "预算 5000，租一年",
        "lang=zh budget=5000 months=12 cues=budget,annual",
    );
    // A sum paid at once over a stated rental.
    check(
        "老板说可以一次性付 2 年，总共 48 万，想租 GPU 做推理",
        r#"lang=zh task=inference budget=20000 months=24"#,
    );
    // A price of a year's rental in a month ("包年…一个月折下来多少") is a year's rental.
    check(
        "A100 40G 包年的话一个月折下来多少钱？",
        r#"lang=zh gpus=a100-40g months=12 cues=price,annual topics=billing"#,
    );
    // A card is not money.
    check(
        "How much for an RTX 3090 per year?",
        "lang=en gpus=rtx3090 months=12 cues=price,annual topics=billing",
    );
}

#[test]
fn parameters_counted_in_millions_and_lengths_joined_by_a_hyphen() {
    check(
        "training a ~500M param GPT from scratch on 10B tokens",
        r#"lang=en size=0.5 task=pretrain tokens=10000000000"#,
    );
    check(
        "QLoRA Llama-3.3-70B on our 50M-token instruction set",
        r#"lang=en model=llama-3.3-70b task=qlora tokens=50000000"#,
    );
    check(
        "a 32k-token context for qwen2.5-7b",
        r#"lang=en model=qwen2.5-7b context=32768"#,
    );
}

#[test]
fn a_number_glued_to_letters_is_part_of_a_name() {
    // The "2" of "K2" is not the start of "2,128k"; the "3" of "Qwen3" is no size.
    check(
        "想用 8 張 H200 跑 Kimi K2，128k 上下文，顯存夠不夠？",
        r#"lang=zh gpus=h200 count=8 model=kimi-k2 task=inference context=131072 cues=feasibility"#,
    );
    check(
        "we fine-tune a Qwen3 model every week",
        r#"lang=en task=lora"#,
    );
}

#[test]
fn training_words_follow_the_rules() {
    check("训练 7B 模型", "lang=zh size=7 task=full");
    check(
        "从零炼一个 3B 的模型，语料 600B token",
        "lang=zh size=3 task=pretrain tokens=600000000000",
    );
    check(
        "想训练一个 13B 的模型，手上有 2T token",
        "lang=zh size=13 task=pretrain tokens=2000000000000",
    );
    check("微调 7B", "lang=zh size=7 task=lora");
}

#[test]
fn a_miss_says_what_it_lacked() {
    use super::Missing;
    let missing = |q: &str| advisor().parser.missing(q);
    assert_eq!(missing("部署一下大模型"), Missing::Model(String::new()));
    assert_eq!(missing("弄个 3 万的"), Missing::Number);
    assert!(matches!(missing("能开发票吗"), Missing::Topic(_)));
}

#[test]
fn a_declined_domestic_card_is_not_a_domestic_wish() {
    let domestic = |q: &str| {
        advisor()
            .parser
            .parse(q, advisor().catalog.billing.usd_cny)
            .asked
            .domestic
    };
    assert!(domestic("信创项目，微调 14B，用昇腾"));
    assert!(domestic("our compliance team wants homegrown chips"));
    assert!(!domestic("不要国产卡，要 CUDA 生态，部署 Qwen2.5-14B"));
    assert!(!domestic("no domestic chips please, Qwen2.5-14B inference"));
}

#[test]
fn a_range_of_money_is_its_upper_end() {
    check(
        "每月大概四五千块，部署 Qwen2.5-7B",
        "lang=zh model=qwen2.5-7b task=inference budget=5000",
    );
    check(
        "we could spend 1500-2500 rmb monthly on a Llama-3-8B box",
        "lang=en model=llama-3-8b budget=2500 cues=price topics=billing",
    );
    check(
        "一年十到十二万，跑 Qwen2.5-14B",
        "lang=zh model=qwen2.5-14b task=inference budget=10000 months=12 cues=annual",
    );
}

#[test]
fn loads_and_targets_by_their_words() {
    // QPS is not a concurrency, and the reply length is not the context.
    check(
        "高峰每秒 4 个请求，每个回答大约 300 token，Qwen2.5-7B",
        "lang=zh model=qwen2.5-7b output=300 qps=4",
    );
    check(
        "每天差不多有五千人访问，部署 Qwen2.5-7B",
        "lang=zh model=qwen2.5-7b task=inference daily=5000",
    );
    check(
        "Qwen2.5-7B chatbot, 12 seats online at the same time",
        "lang=en model=qwen2.5-7b task=inference concurrency=12",
    );
    // Requests a minute are a sixtieth of them a second.
    check(
        "晚高峰每分钟大约 600 个请求，每个请求输入 1000、输出 200 token，模型 Qwen2.5-14B",
        "lang=zh model=qwen2.5-14b context=1200 output=200 qps=10",
    );
    check(
        "Qwen2.5-7B behind an API doing 300 req/min",
        "lang=en model=qwen2.5-7b qps=5",
    );
    // A model name between the people and "at the same time".
    check(
        "Office of ~10 people, all hitting Ollama with llama3.1:8b at the same time",
        "lang=en model=llama-3.1-8b precision=int4 concurrency=10 topics=framework",
    );
    // The answer's length said as "N tokens of answer"; the context per user.
    check(
        "~6k tokens of prompt plus 500 tokens of answer, Qwen2.5-32B",
        "lang=en model=qwen2.5-32b context=6644 output=500",
    );
    check(
        "Qwen3-32B 给 4 个人同时用，每人 16k",
        "lang=zh model=qwen3-32b context=16384 concurrency=4 topics=concurrency",
    );
    check(
        "首字要在 2 秒内出来，每秒 25 个字，Qwen2.5-14B",
        "lang=zh model=qwen2.5-14b ttft=2 speed=25",
    );
    check(
        "Qwen2.5-7B with a time to first token under 800 ms",
        "lang=en model=qwen2.5-7b ttft=0.8",
    );
}

#[test]
fn machines_and_durations() {
    check(
        "two H100 machines for DeepSeek-R1",
        "lang=en gpus=h100-sxm count=16 model=deepseek-r1",
    );
    check(
        "三台 H100 整机跑 DeepSeek-V3",
        "lang=zh gpus=h100-sxm count=24 model=deepseek-v3 task=inference cues=machine",
    );
    // A multiplier counts the cards of one node.
    check(
        "Llama-3.1-405B FP8 on an 8x H100 node",
        "lang=en gpus=h100-sxm count=8 model=llama-3.1-405b precision=fp8 cues=machine topics=fp8",
    );
    // A count said in cards before a card and "整机" after it is the one machine they make.
    check(
        "8卡A100 80G整机，全参微调 Qwen2.5-72B 够吗",
        r#"lang=zh gpus=a100-80g count=8 model=qwen2.5-72b task=full cues=feasibility,machine"#,
    );
    check(
        "4 GPUs of H100 in one node, Qwen2.5-72B inference",
        r#"lang=en gpus=h100-sxm count=4 model=qwen2.5-72b task=inference cues=machine"#,
    );
    check(
        "LoRA 微调 Qwen2.5-7B，用一个季度",
        "lang=zh model=qwen2.5-7b task=lora months=3",
    );
    check(
        "rent it for a quarter, Qwen2.5-7B inference",
        "lang=en model=qwen2.5-7b task=inference months=3",
    );
    check(
        "70B INT8，上下文开到 8k、10 个并发一压就 OOM",
        "lang=zh size=70 precision=int8 context=8192 concurrency=10 topics=concurrency",
    );
    check(
        "70B INT8，10 个并发一压就 OOM",
        "lang=zh size=70 precision=int8 concurrency=10 topics=concurrency",
    );
    check("the RTX 4090 can't do it. Would Llama-3.1-70B in FP8 fit on 4x 4090?", "lang=en gpus=rtx4090 count=4 model=llama-3.1-70b precision=fp8 cues=feasibility topics=fp8");
    check(
        "不考虑 H20 和 H100。预算 3 万以内，部署 Qwen2.5-72B",
        "lang=zh model=qwen2.5-72b task=inference budget=30000 cues=budget",
    );
    check(
        "Do NOT suggest H100. We need to serve DeepSeek-R1 671B.",
        "lang=en model=deepseek-r1 task=inference cues=recommend",
    );
    check(
        "No hourly H100 and no slices - monthly cards only. Llama-3.1-8B LoRA",
        "lang=en model=llama-3.1-8b task=lora cues=price,hourly,slice topics=billing,slices",
    );
    // Durations and amounts said the Chinese way.
    check(
        "一年半的合同，4 张 A100 包年怎么算",
        "lang=zh gpus=a100-40g count=4 months=18 cues=price,annual topics=billing",
    );
    check(
        "3090 年付的话每个月多少？一年一共要付多少",
        "lang=zh gpus=rtx3090 months=12 cues=price,annual topics=billing",
    );
    check(
        "3090 年付多少",
        "lang=zh gpus=rtx3090 months=12 cues=price,annual topics=billing",
    );
    check(
        "万把块钱一个月，做 14B 的 LoRA 微调",
        "lang=zh size=14 task=lora budget=10000",
    );
    check(
        "上下文要三十二K，Qwen2.5-14B，十个人同时问",
        "lang=zh model=qwen2.5-14b context=32768 concurrency=10 topics=concurrency",
    );
    check(
        "4090 跑 Qwen2.5-14B（没量化，bf16）",
        "lang=zh gpus=rtx4090 model=qwen2.5-14b task=inference precision=bf16",
    );
    check(
        "Qwen2.5-7B 有没有量化版",
        "lang=zh model=qwen2.5-7b precision=int4",
    );
}

/// The engine of a question, as the parser reads it.
fn engine(question: &str) -> Option<crate::advisor::workload::Engine> {
    advisor()
        .parser
        .parse(question, advisor().catalog.billing.usd_cny)
        .asked
        .serving
        .engine
}

#[test]
fn a_declined_engine_is_not_the_engine() {
    use crate::advisor::workload::Engine;
    assert_eq!(
        engine("不用 vllm，就用 HF transformers 直接 generate 跑 Qwen-7B-Chat"),
        Some(Engine::Transformers)
    );
    assert_eq!(
        engine("no vLLM, plain transformers for Llama-3.1-8B"),
        Some(Engine::Transformers)
    );
    assert_eq!(engine("用 vLLM 部署，不用 ollama"), Some(Engine::Vllm));
    // Ollama runs llama.cpp: a GGUF quant named before it is Ollama's.
    assert_eq!(
        engine("3090 跑 Qwen2.5-14B 的 Q4_K_M（用 ollama）够吗"),
        Some(Engine::Ollama)
    );
    assert_eq!(engine("llama.cpp 跑 Q4_K_M"), Some(Engine::LlamaCpp));
    // The negation reaches back only to the engine before: the choice after a declined
    // one stands.
    assert_eq!(engine("不用 vLLM 用 ollama 的话"), Some(Engine::Ollama));
    assert_eq!(
        engine("skip sglang use vllm for Qwen3-8B"),
        Some(Engine::Vllm)
    );
}

#[test]
fn a_price_quoted_elsewhere_is_neither_a_budget_nor_a_price_question() {
    check(
        "有一家 3090 报价 1100/月，听说有些是矿卡翻新的",
        "lang=zh gpus=rtx3090 topics=pitfall-used-cards,used-cards",
    );
    check(
        "another provider quoted us ¥9000 a month for an A100 80G, is yours new hardware?",
        "lang=en gpus=a100-80g topics=pitfall-used-cards",
    );
    // Asked beside the quote, the price is still asked.
    check(
        "有一家 3090 报价 1100/月，你们 3090 多少钱？",
        "lang=zh gpus=rtx3090 cues=price",
    );
}

#[test]
fn a_card_excepted_is_set_aside_unless_the_rest_are_refused() {
    let declined = |q: &str| {
        advisor()
            .parser
            .parse(q, advisor().catalog.billing.usd_cny)
            .asked
    };
    for (q, gone) in [
        ("除了 H20 还有啥卡能跑 Qwen3-32B fp8", "h20"),
        (
            "besides the A100 40G, what else runs Qwen2.5-14B?",
            "a100-40g",
        ),
        ("T4 太慢不考虑，跑 14b int4 最便宜的方案是啥", "t4"),
        (
            "the 4090 is too small, skip it. what runs qwen2.5-32b?",
            "rtx4090",
        ),
        ("不要 H100 用 A100 跑 qwen2.5-14b 可以吗", "h100-sxm"),
    ] {
        let a = declined(q);
        assert_eq!(a.declined, [gone], "{q:?}");
        assert!(!a.gpus.iter().any(|g| g == gone), "{q:?}");
    }
    // The choice after the declined card is the card asked about.
    assert_eq!(
        declined("不要 H100 用 A100 跑 qwen2.5-14b 可以吗").gpus,
        ["a100-40g"]
    );
    // With the rest refused, the card excepted is the one kept.
    for q in [
        "除了 A100 别的都不要，跑 Qwen2.5-14B",
        "nothing other than a 4090 for Qwen3-8B",
    ] {
        let a = declined(q);
        assert!(a.declined.is_empty(), "{q:?}");
        assert_eq!(a.gpus.len(), 1, "{q:?}");
    }
    // A reason that is a question is no refusal.
    assert!(declined("4090 太慢了怎么办，跑 Qwen3-8B")
        .declined
        .is_empty());
}

#[test]
fn a_card_declined_once_stays_declined() {
    check(
        "Llama-3.1-70B 推理，别给我推 4090，我们之前用 4090 踩过坑",
        "lang=zh model=llama-3.1-70b task=inference",
    );
}

#[test]
fn idioms_and_short_forms_are_not_numbers_or_counts() {
    // 万一 ("in case") is no amount; a numeral does not begin with 万 or 亿.
    check(
        "年付能便宜多少？签一年万一项目黄了咋办",
        "lang=zh months=12 cues=price,annual topics=pitfall-annual-contract,billing",
    );
    // "a single-user chatbot" is no card count.
    check(
        "Gemma 2 27B, no quantization please, just a single-user chatbot",
        "lang=en model=gemma-2-27b task=inference",
    );
    // LLaMA-Factory's cutoff is the sequence length; "qw2.5" is Qwen2.5.
    check(
        "单卡 4090 qlora qw2.5-14b 能跑吗 cutoff 1024",
        "lang=zh gpus=rtx4090 count=1 model=qwen2.5-14b task=qlora context=1024 cues=feasibility",
    );
}

#[test]
fn the_model_moved_to_ollama_tags_and_totals_over_months() {
    check(
        "现在用两张3090跑 Qwen2.5-7B-Instruct，打算升级到 Qwen3-14B，上下文 16k",
        "lang=zh gpus=rtx3090 count=2 model=qwen3-14b task=inference context=16384",
    );
    check(
        "Ollama 跑 gemma3:27b（Q4_K_M）",
        "lang=zh model=gemma-3-27b task=inference precision=int4 topics=framework",
    );
    check(
        "We have $9k for Q3 to LoRA fine-tune Qwen2.5-32B",
        "lang=en model=qwen2.5-32b task=lora budget=21600 months=3",
    );
    check(
        "$3000 for 3 months, Qwen2.5-7B inference",
        "lang=en model=qwen2.5-7b task=inference budget=7200 months=3",
    );
    check(
        "ok and if we pay for a whole year upfront?",
        "lang=en months=12 topics=billing",
    );
}

#[test]
fn people_using_it_and_a_number_after_a_comma() {
    check(
        "Qwen2.5-Coder-32B 推理，INT4，5 个人用",
        "lang=zh model=qwen2.5-coder-32b task=inference precision=int4 concurrency=5",
    );
    check(
        "~600 staff, realistically 60 of them using it at the same time. Model is Qwen3-14B",
        "lang=en model=qwen3-14b concurrency=60",
    );
    check(
        "H20 和 H100 跑推理到底差多少",
        "lang=zh gpus=h20,h100-sxm task=inference cues=compare topics=pitfall-h100-for-inference",
    );
}

#[test]
fn bytes_are_not_sizes_and_a_team_online_together_is_concurrency() {
    check(
        "数据集有 2TB 左右，硬盘够不够放？要不要另外加盘",
        "lang=zh cues=feasibility,storage.ask,storage.fit topics=storage",
    );
    check(
        "DeepSeek-R1-Distill-Qwen-32B 给 50 人的研发团队写代码用，大家基本同时在线，用 4090 要几张？",
        "lang=zh gpus=rtx4090 model=deepseek-r1-distill-qwen-32b concurrency=50 cues=recommend,count.ask topics=concurrency",
    );
    check(
        "千问2.5-72B 推理，int4，显卡只能用 4090",
        "lang=zh gpus=rtx4090 model=qwen2.5-72b task=inference precision=int4",
    );
    check(
        "我手上有张4090，跑 Llama-3.3-70B 能行不？不量化那种",
        "lang=zh gpus=rtx4090 model=llama-3.3-70b task=inference cues=feasibility",
    );
}

#[test]
fn budgets_per_day_and_hour_and_two_sizes_of_one_card() {
    check("每天预算 100 块左右，想跑 DeepSeek-R1-Distill-Qwen-14B 推理，够不够？", "lang=zh model=deepseek-r1-distill-qwen-14b task=inference budget=3000 cues=feasibility,budget");
    check(
        "1.5个w 能不能搞定 qwen2.5-72b 推理，不要量化的",
        r#"lang=zh model=qwen2.5-72b task=inference budget=15000 cues=feasibility"#,
    );
    check(
        "Qwen2.5-7B 推理，32k 够不够",
        r#"lang=zh model=qwen2.5-7b task=inference cues=feasibility"#,
    );
    check(
        "一周预算500上下，lora 微调一下 chatglm3-6b 够不",
        r#"lang=zh model=chatglm3-6b task=lora budget=2142.8571428571427 cues=feasibility,budget"#,
    );
    check(
        "we can spend about $150 a week on a Qwen2.5-7B endpoint",
        r#"lang=en model=qwen2.5-7b budget=4628.571428571428"#,
    );
    // The name that runs past a shorter one it overlaps is the one meant.
    check(
        "想给团队部署满血版 DeepSeek-V3，不要蒸馏的，需要什么机器",
        r#"lang=zh model=deepseek-v3 task=inference cues=recommend"#,
    );
    check(
        "满血版deepseek 部署要几张卡",
        r#"lang=zh model=deepseek-r1 task=inference cues=recommend,count.ask"#,
    );
    check(
        "每小时不超过 5 块钱，Qwen2.5-7B 推理能租到啥？",
        "lang=zh model=qwen2.5-7b task=inference budget=3600 cues=budget,hourly",
    );
    check(
        "A100 40GB vs 80GB - is the bigger one worth paying for?",
        "lang=en gpus=a100-40g,a100-80g cues=compare",
    );
    check(
        "is the 80GB A100 really worth it over the 40GB one?",
        "lang=en gpus=a100-80g,a100-40g cues=compare",
    );
    check(
        "QPS around 5, each chat request takes ~6 s end to end. Qwen2.5-14B on vLLM",
        "lang=en model=qwen2.5-14b task=inference qps=5 topics=framework,concurrency",
    );
}

#[test]
fn a_card_excepted_from_a_refusal_and_a_sequence_length_after_its_number() {
    check("租卡跑 qwen3-8b 的 FP8 版本，别给我推 4090 以外的消费卡 预算 4k/月", "lang=zh gpus=rtx4090 model=qwen3-8b task=inference precision=fp8 budget=4000 cues=budget topics=consumer-vs-datacenter,fp8");
    check(
        "Fine-tune gemma 2 27b w/ LoRA, 8k sequence length",
        "lang=en model=gemma-2-27b task=lora context=8192",
    );
}

#[test]
fn a_question_particle_anywhere_and_images_at_once() {
    check(
        "3090 能全参微调 7B 吗，用 LLaMA-Factory",
        "lang=zh gpus=rtx3090 size=7 task=full cues=feasibility",
    );
    check(
        "T4 跑个 Qwen2.5-1.5B 做意图分类应该可以吧",
        "lang=zh gpus=t4 model=qwen2.5-1.5b task=inference cues=feasibility",
    );
    check(
        "SDXL image gen API, maybe 10 images at once, which GPU?",
        "lang=en model=sdxl concurrency=10 cues=recommend",
    );
}

#[test]
fn people_at_once_declines_after_the_card_and_the_card_turned_to() {
    check(
        "host Mistral Small 3.1 for our discord bot, like 30 ppl chatting at once",
        r#"lang=en model=mistral-small-3.1-24b task=inference concurrency=30"#,
    );
    check(
        "our team of 40 engineers, assume all 40 could be hitting it at once, Qwen3-8B",
        r#"lang=en model=qwen3-8b concurrency=40"#,
    );
    check(
        "serve Llama-3.2-3B, maybe 2 req at a time",
        r#"lang=en model=llama-3.2-3b task=inference concurrency=2"#,
    );
    check(
        "請問 Qwen2.5-14B 推論要租什麼卡？4090 就不用推薦了",
        r#"lang=zh model=qwen2.5-14b cues=recommend"#,
    );
    check(
        "H100 is off the table, what runs a 32B model?",
        r#"lang=en size=32"#,
    );
    check(
        "你说 3090 跑 13B 不行，那 4090 跑 Qwen2.5-14B INT8 呢？",
        r#"lang=zh gpus=rtx4090,rtx3090 model=qwen2.5-14b task=inference precision=int8 cues=followup"#,
    );
    check(
        "T4 和 3090 二选一，跑个 7b 问答用",
        r#"lang=zh gpus=t4,rtx3090 size=7 task=inference cues=compare"#,
    );
    check(
        "h200 or h100 for hosting a 70B model, which would you pick",
        r#"lang=en gpus=h200,h100-sxm size=70 task=inference cues=compare"#,
    );
    check(
        "mixtral 8x7b fp16 on one 80gb a100",
        r#"lang=en gpus=a100-80g count=1 model=mixtral-8x7b precision=fp16"#,
    );
}

#[test]
fn tasks_said_around_their_negations_and_data_sizes() {
    check(
        "We need to fully fine-tune Llama-3-8B (not LoRA), bf16, seq len 2048",
        r#"lang=en model=llama-3-8b task=full precision=bf16 context=2048 cues=recommend"#,
    );
    // A method given up on right after it is not the one asked for.
    check("全参不行的话，LoRA 呢", "lang=zh task=lora cues=followup");
    check(
        "if full fine-tuning won't fit, what about LoRA on Qwen2.5-32B?",
        "lang=en model=qwen2.5-32b task=lora cues=followup",
    );
    check(
        "数据量大概 20 亿 token，要跑多久",
        r#"lang=zh tokens=2000000000"#,
    );
    // Data counted in samples and their length: the product, and neither number is a
    // context or a concurrency.
    check(
        "SFT 数据 50 万条，平均每条 1k token，想微调 Llama-3.1-8B",
        "lang=zh model=llama-3.1-8b task=lora tokens=500000000",
    );
    check(
        "200k samples of ~2k tokens each, full fine-tune Qwen2.5-7B",
        "lang=en model=qwen2.5-7b task=full tokens=400000000",
    );
    check(
        "20 万条问答，要多少卡",
        "lang=zh task=inference cues=count.ask",
    );
    check(
        "sglang 部署 Qwen2.5-32B，输出一般比较长，1000 token 上下",
        r#"lang=zh model=qwen2.5-32b task=inference output=1000 topics=framework"#,
    );
    check(
        "预算 1w5/月，想全参微调 Qwen3-8B",
        r#"lang=zh model=qwen3-8b task=full budget=15000 cues=budget"#,
    );
    check(
        "月预算一个w，跑 7B 聊天",
        r#"lang=zh size=7 task=inference budget=10000 cues=budget"#,
    );
    check(
        "一年预算 6 万，能租什么？",
        r#"lang=zh budget=5000 months=12 cues=budget,recommend,annual"#,
    );
}

#[test]
fn a_card_in_the_plural() {
    check(
        "Deploying Llama-3-70B with TensorRT-LLM on H100s - time to first token?",
        r#"lang=en gpus=h100-sxm plural=yes model=llama-3-70b task=inference topics=framework"#,
    );
    check(
        "多张 4090 跑 Qwen2.5-72B 行不行",
        r#"lang=zh gpus=rtx4090 plural=yes model=qwen2.5-72b task=inference cues=feasibility topics=pitfall-no-nvlink-multi-gpu"#,
    );
    check(
        "4090 能跑 70B 吗",
        r#"lang=zh gpus=rtx4090 size=70 task=inference cues=feasibility topics=pitfall-4090-70b"#,
    );
}

#[test]
fn the_ask_of_a_long_message_and_counts_said_in_gpus() {
    check("Qwen3-235B-A22B inference? bf16 please, no quant — we got burned on quality with a 4-bit build before.", r#"lang=en model=qwen3-235b-a22b task=inference precision=bf16"#);
    check("We already rent your 8-GPU H100 box for training. Could the same machine host Qwen3-235B-A22B in bf16?", r#"lang=en gpus=h100-sxm count=8 model=qwen3-235b-a22b task=inference precision=bf16 topics=pitfall-one-machine-both"#);
    check(
        "用 SGLang 部署 Qwen3-32B，上下文按 8k 算",
        r#"lang=zh model=qwen3-32b task=inference context=8192 topics=framework"#,
    );
    check(
        "我们在 A100 上训 13B，换 H100 能快多少",
        r#"lang=zh gpus=a100-40g,h100-sxm size=13 task=full cues=compare topics=upgrade-h100"#,
    );
    check(
        "训练好的 Qwen-7B 部署要什么卡",
        r#"lang=zh model=qwen-7b task=inference cues=recommend"#,
    );
    check(
        "预训练 7B，300B token，能两个月内跑完吗",
        r#"lang=zh size=7 task=pretrain months=2 tokens=300000000000"#,
    );
}

#[test]
fn totals_over_weeks_machines_of_cards_requests_by_length_and_refusals_in_english() {
    check(
        "项目做 6 周，总预算 2 万，LoRA 微调 Qwen2.5-7B",
        r#"lang=zh model=qwen2.5-7b task=lora budget=14285.714285714286 months=1.4 cues=budget"#,
    );
    check(
        "包年的话 A100 40G 一个月多少？",
        r#"lang=zh gpus=a100-40g months=12 cues=price,annual topics=billing"#,
    );
    check(
        "预算 1w2 一个月，能干啥",
        r#"lang=zh budget=12000 cues=budget"#,
    );
    check(
        "train Mistral-7B from scratch on 300B tokens using 2 machines of 8x A100 80G",
        r#"lang=en gpus=a100-80g count=16 model=mistral-7b task=pretrain tokens=300000000000"#,
    );
    check(
        "换成 H100 整机呢",
        r#"lang=zh gpus=h100-sxm count=8 cues=followup,machine topics=upgrade-h100"#,
    );
    check(
        "Qwen3-235B-A22B-FP8 on 4x H100, how many 8k requests fit?",
        r#"lang=en gpus=h100-sxm count=4 model=qwen3-235b-a22b precision=fp8 context=8192 output=4096 cues=recommend topics=fp8"#,
    );
    check(
        "10k requests per day on Qwen2.5-7B",
        r#"lang=en model=qwen2.5-7b qps=0.463 day_req=10000"#,
    );
    // A day's requests over the hours said, or office hours; a day's count is not a
    // count of users, nor a request's length.
    check(
        "每天大概 2 万次调用，基本集中在白天 8 小时，平均每次输入 1500 token、输出 300，用 Qwen2.5-7B",
        r#"lang=zh model=qwen2.5-7b context=1800 output=300 qps=0.694 day_req=20000 hours=8"#,
    );
    check(
        "We get about 50k API calls per day, mostly office hours, Llama-3.1-8B",
        r#"lang=en model=llama-3.1-8b qps=1.736 day_req=50000 hours=8"#,
    );
    check(
        "Can I serve Qwen3-14B to 30 个同事 on one A100 40G?",
        r#"lang=zh gpus=a100-40g count=1 model=qwen3-14b task=inference concurrency=30 cues=feasibility"#,
    );
    check(
        "用自己微调过的 Qwen2.5-14B 做内部问答",
        r#"lang=zh model=qwen2.5-14b task=inference"#,
    );
    check(
        "For compliance reasons we can't use the H100 nodes, so A100s only.",
        r#"lang=en gpus=a100-40g plural=yes topics=compliance"#,
    );
    check(
        "There is zero budget for H100, train a 1.3B from scratch",
        r#"lang=en size=1.3 task=pretrain cues=budget"#,
    );
    for q in [
        "For compliance reasons we can't use the H100 nodes, so A100s only.",
        "There is zero budget for H100, train a 1.3B from scratch",
    ] {
        let p = advisor().parser.parse(q, advisor().catalog.billing.usd_cny);
        assert_eq!(p.asked.declined, ["h100-sxm"], "{q:?}");
    }
    check(
        "A100 40G 和 4090 哪个适合跑 Qwen3-14B 推理",
        r#"lang=zh gpus=a100-40g,rtx4090 model=qwen3-14b task=inference cues=compare"#,
    );
}

#[test]
fn classes_of_cards_declined_people_served_and_counts_refused() {
    let parse = |q: &str| advisor().parser.parse(q, advisor().catalog.billing.usd_cny);
    for q in [
        "LoRA fine-tune of Qwen2.5-3B, no consumer cards please",
        "只要数据中心卡，跑 Qwen2.5-7B",
    ] {
        let a = parse(q).asked;
        let consumer: Vec<&str> = advisor()
            .catalog
            .gpus
            .iter()
            .filter(|g| g.consumer)
            .map(|g| g.id.as_str())
            .collect();
        assert!(!consumer.is_empty());
        assert!(
            consumer.iter().all(|g| a.declined.iter().any(|d| d == g)),
            "{q:?}"
        );
        assert!(!a.whole_cards, "{q:?}");
    }
    for q in [
        "别推荐切片，我要独占整卡，跑个 Qwen2.5-0.5B",
        "Qwen2.5-0.5B on a dedicated GPU, no MIG",
    ] {
        let a = parse(q).asked;
        assert!(a.whole_cards, "{q:?}");
        assert!(a.declined.is_empty(), "{q:?}");
    }
    let a = parse("一张 A100 能切几个切片跑 Qwen2.5-0.5B").asked;
    assert!(!a.whole_cards);
    check(
        "gpt-oss-20b 给 5 个人内部用，最便宜的方案是啥",
        "lang=zh model=gpt-oss-20b concurrency=5 cues=recommend,cheapest.ask",
    );
    check(
        "Qwen2.5-Coder-32B-Instruct 给 30 个程序员做代码补全，上下文 16k",
        "lang=zh model=qwen2.5-coder-32b context=16384 concurrency=30",
    );
    check(
        "we don't want to pay for 8 cards — smallest setup for Mixtral-8x7B",
        "lang=en model=mixtral-8x7b cues=recommend",
    );
    check(
        "customer wants to train a 7B model. They said train, not fine-tune.",
        "lang=en size=7 task=full",
    );
    // Asking whether ("能不能用", "要不要上") and another vendor ("别家") decline nothing.
    check(
        "能不能用 T4 做 7B 的 LoRA 训练",
        "lang=zh gpus=t4 size=7 task=lora cues=feasibility",
    );
    check(
        "要不要上 H100 跑 Qwen2.5-7B",
        "lang=zh gpus=h100-sxm model=qwen2.5-7b task=inference topics=upgrade-h100",
    );
    check(
        "他们在别家租了两张 3090 跑 Qwen2.5-14B",
        "lang=zh gpus=rtx3090 count=2 model=qwen2.5-14b task=inference",
    );
    check(
        "千亿级的模型做推理，FP8",
        "lang=zh size=100 task=inference precision=fp8 topics=fp8",
    );
}

#[test]
fn cards_sized_before_their_name_and_one_card_beside_it() {
    // The memory said before the name picks the family's card of that size; an amount
    // of memory needed is not a card.
    check(
        "80G 的 A100 两张能跑满血 Qwen3-235B-A22B 吗",
        "lang=zh gpus=a100-80g count=2 model=qwen3-235b-a22b task=inference cues=feasibility",
    );
    check(
        "两张 80G 的 A100 跑 Qwen2.5-72B 行吗",
        "lang=zh gpus=a100-80g count=2 model=qwen2.5-72b task=inference cues=feasibility",
    );
    check(
        "需要 80G 显存，A100 40G 够吗",
        "lang=zh gpus=a100-40g cues=feasibility",
    );
    // One card beside the name is the customer's count.
    check("llama.cpp 跑 Qwen3-30B-A3B Q4_K_M，单卡 3090，我自己加两个同事用", "lang=zh gpus=rtx3090 count=1 model=qwen3-30b-a3b task=inference precision=int4 concurrency=2 topics=framework");
    check("ollama run deepseek-r1:70b，用的 A100 40G 单卡，怎么办", "lang=zh gpus=a100-40g count=1 model=deepseek-r1-distill-llama-70b task=inference precision=int4 topics=framework");
}

#[test]
fn users_at_once_against_the_people_they_are_out_of() {
    check(
        "building an internal copilot for 300 devs, maybe 40 hitting it at once. qwen2.5-coder-32b, 16k context. what do we need?",
        "lang=en model=qwen2.5-coder-32b context=16384 concurrency=40 cues=recommend",
    );
    check(
        "internal hr chatbot, 2,000 employees, usage is light — maybe 2% at peak. gemma 3 12b. what should we rent?",
        "lang=en model=gemma-3-12b task=inference daily=2000 cues=recommend,recommend.ask",
    );
    check(
        "HF transformers 直接起个服务，Qwen2.5-7B，就 3 个人内部测一下，T4 够吗",
        "lang=zh gpus=t4 model=qwen2.5-7b concurrency=3 cues=feasibility",
    );
}

#[test]
fn casual_can_it_questions_billing_modes_and_replacing_cards() {
    check(
        "qwen3 32b q4 on a 3090 w/ ctx 32k... gonna oom or nah",
        "lang=en gpus=rtx3090 model=qwen3-32b precision=int4 context=32768 cues=feasibility",
    );
    check("ok so full finetune qwen3-8b. will one h100 80gb do it or do i need more", "lang=en gpus=h100-sxm count=1 model=qwen3-8b task=full cues=feasibility,escalate,recommend");
    check(
        "do u guys bill by the hour or only monthly? just wanna poke at an h100 for an afternoon",
        "lang=en gpus=h100-sxm cues=price,billing_mode,hourly topics=billing",
    );
    check("A100 40G 日租多少？", "lang=zh gpus=a100-40g cues=price");
    // A run that keeps crashing, "is it the card?": how to check the cards (monitoring).
    check(
        "4 张 3090 用 deepspeed 全参训练 Qwen2.5-7B 一直挂，是不是卡的问题？该换什么",
        "lang=zh gpus=rtx3090 count=4 model=qwen2.5-7b task=full cues=replace,diagnostic topics=monitoring",
    );
    check("qwen2.5_72b_instruct_awq 单卡 a100-80g 能跑吗，ctx 4k", "lang=zh gpus=a100-80g count=1 model=qwen2.5-72b task=inference precision=int4 context=4096 cues=feasibility");
}

#[test]
fn a_mixture_of_experts_by_its_sizes() {
    check(
        "自研的 21B-A3B 模型推理要什么卡",
        "lang=zh size=21 active=3 task=inference cues=recommend",
    );
    check(
        "总参 80B、激活参数 13B 的 MoE 能上 4090 吗",
        "lang=zh gpus=rtx4090 size=80 active=13",
    );
    check(
        "a 120b moe with 5.1b active, which card?",
        "lang=en size=120 active=5.1 cues=recommend",
    );
    check(
        "30B 的模型 A100 跑得动吗",
        "lang=zh gpus=a100-40g size=30 task=inference cues=feasibility",
    );
}

#[test]
fn counts_glued_after_cards_totals_over_months_samples_with_qualifiers_and_several_questions() {
    // A count glued after the card's name is the card's count.
    check(
        "3090x2 跑 llama3.3 70b q4 够不够啊",
        r#"lang=zh gpus=rtx3090 count=2 model=llama-3.3-70b task=inference precision=int4 cues=feasibility"#,
    );
    // "三个月总共 9000": the money of three months.
    check(
        "跑个7b推理，三个月总共就9000块",
        r#"lang=zh size=7 task=inference budget=3000 months=3"#,
    );
    // Samples named with what they are ("customer-support dialogues") still count.
    check(
        "LoRA Llama-3.1-8B on about 120k customer-support dialogues (roughly 900 tokens each)",
        r#"lang=en model=llama-3.1-8b task=lora tokens=108000000"#,
    );
    // The peak as a fraction of the people, daily active users, a context "只要" 4k.
    check(
        "做内部知识库问答，公司 300 人，高峰大概十分之一的人同时在问，模型用 Qwen2.5-14B-Instruct",
        r#"lang=zh model=qwen2.5-14b task=inference daily=300"#,
    );
    check(
        "每天大概 5000 活跃用户，用 Qwen3-30B-A3B 做聊天，上下文 8k",
        r#"lang=zh model=qwen3-30b-a3b task=inference context=8192 daily=5000"#,
    );
    check("上下文只要 4k 就行", r#"lang=zh context=4096"#);
    check(
        "您好，敝司要部署 Gemma 3 27B 給內部 300 位同仁使用，尖峰大約三成同時在線，請推薦配置",
        r#"lang=zh model=gemma-3-27b task=inference daily=300 cues=recommend,recommend.ask topics=concurrency"#,
    );
    check(
        "想 deploy 一个 Baichuan2-13B-Chat 做 RAG，大概 5 个 concurrent，context 8k",
        r#"lang=zh model=baichuan2-13b task=inference context=8192 concurrency=5 topics=concurrency"#,
    );
    check(
        "How long would a LoRA on Qwen2.5-7B take with 200M training tokens?",
        r#"lang=en model=qwen2.5-7b task=lora tokens=200000000 cues=feasibility"#,
    );
    // Two questions in one message: each one's topic.
    check(
        "月繳跟年繳差多少？簽年約要注意什麼",
        r#"lang=zh cues=compare topics=pitfall-annual-contract,billing"#,
    );
    check(
        "how often should I checkpoint, and what should I be watching on a rented box?",
        r#"lang=en topics=migration,monitoring"#,
    );
}

#[test]
fn questions_beside_a_workload_other_providers_quotes_and_kv_cache_said_twice() {
    // The workload stated, the questions the service's or the fees': the FAQ answers.
    check(
        "下个月要全参训练 Qwen2.5-7B，原始语料大概 2TB，存储怎么配？训练中间的 checkpoint 放系统盘还是数据盘？",
        r#"lang=zh model=qwen2.5-7b task=full cues=compare,recommend topics=storage,migration"#,
    );
    check(
        "We'll LoRA fine-tune Mistral-7B next month. Besides the GPU rent, are there setup fees, extra IP charges or bandwidth overages we should budget for?",
        r#"lang=en model=mistral-7b task=lora cues=recommend topics=hidden-fees,network"#,
    );
    check(
        "We run Llama-3-70B for 30 users. Are there extra costs?",
        r#"lang=en model=llama-3-70b task=inference concurrency=30 cues=price topics=hidden-fees"#,
    );
    // A configuration asked for, a price of the workload, a card question: not background.
    check(
        "帮我推荐个配置跑 Qwen-7B，另外有香港节点吗？",
        r#"lang=zh model=qwen-7b task=inference cues=recommend topics=network"#,
    );
    check(
        "Qwen-14B 推理，50 人并发，按月付多少钱？",
        r#"lang=zh model=qwen-14b task=inference concurrency=50 cues=price topics=billing,concurrency"#,
    );
    check(
        "Qwen-72B 推理，NVLink 有必要吗？",
        r#"lang=zh model=qwen-72b task=inference topics=nvlink"#,
    );
    // Another provider's quote asks no price.
    check(
        "有家報價 A100 比你們便宜一千多，說是拆機卡，能租嗎？",
        r#"lang=zh gpus=a100-40g cues=compare topics=pitfall-unit-price-only,pitfall-used-cards,used-cards"#,
    );
    check("A100 报价多少", r#"lang=zh gpus=a100-40g cues=price"#);
    // "for like 5 ppl" after a serving verb is the load.
    check(
        "is a single A100 80GB enough to serve llama 3.1 70b in fp16 for like 5 ppl?",
        r#"lang=en gpus=a100-80g count=1 model=llama-3.1-70b task=inference precision=fp16 concurrency=5 cues=feasibility"#,
    );
    check(
        "第一次用这个机器人，请问它能帮我做什么？",
        r#"lang=zh cues=help,card.referred"#,
    );
    // "FP8 KV cache (--kv-cache-dtype fp8)": the cache, twice; the weights stay.
    check(
        "Qwen3-32B bf16, what if we enable the FP8 KV cache (--kv-cache-dtype fp8)?",
        r#"lang=en model=qwen3-32b precision=bf16 topics=concurrency,fp8"#,
    );
    // "-ctk q8_0": llama.cpp's cache format; the weights stay the Q4_K_M named.
    check(
        "llama-server -ctk q8_0 -ctv q8_0 -m qwen2.5-14b-instruct-q4_k_m.gguf on a 4090",
        r#"lang=en gpus=rtx4090 model=qwen2.5-14b precision=int4 cues=machine topics=framework"#,
    );
    // An amount asked with a billing mode is a price; paying for the whole year is a
    // rental of twelve months (the annual price).
    check(
        "what do you charge for an RTX 3090 per month? any discount if we pay for the whole year",
        r#"lang=en gpus=rtx3090 months=12 cues=price,billing_mode topics=billing"#,
    );
}

#[test]
fn counts_asked_about_differences_of_price_and_loads_of_guests_and_writers() {
    // The count the question asks about, not the one rented now.
    check(
        "目前在贵司租了 2 张 A100 40G 做测试。按这个量，4 张 A100 40G 到底够不够？",
        r#"lang=zh gpus=a100-40g count=4 cues=feasibility"#,
    );
    // A price difference is no budget; a year said as "the whole year" is.
    check(
        "别家 3090 每月便宜一两百，是不是只看单价选最便宜的就行",
        r#"lang=zh gpus=rtx3090 topics=pitfall-unit-price-only"#,
    );
    check(
        "we have maybe 30k yuan for the whole year. is that enough to run a 14b model for our staff?",
        r#"lang=en size=14 task=inference budget=2500 months=12 cues=feasibility,card.referred"#,
    );
    // Guests a day, writers at once, a QPS with the seconds of each request.
    check(
        "it's 200 guests a day in total, not at the same time",
        r#"lang=en daily=200 cues=price topics=checklist"#,
    );
    check(
        "Mistral Small 24B for copywriting, 8 writers using it at the same time",
        r#"lang=en model=mistral-small-3-24b concurrency=8"#,
    );
    check(
        "用 Qwen3-VL-8B-Instruct，QPS 2，每次大概 3 秒",
        r#"lang=zh model=qwen3-vl-8b qps=2 topics=concurrency"#,
    );
    // Two cards made one, several people at once: the topics.
    check(
        "两张 3090 能不能连起来当一张 48G 的卡用来训练模型",
        r#"lang=zh gpus=rtx3090 count=2 task=full cues=feasibility topics=nvlink"#,
    );
    check(
        "为什么同一张卡，一个人用挺快的，十几个人一起用就爆显存了",
        r#"lang=zh count=1 concurrency=1 cues=why topics=concurrency"#,
    );
}

#[test]
fn speeds_asked_on_a_card_counts_asked_after_a_workload_and_months_of_a_project() {
    check(
        "whats the tok/s on a 3090 for llama 3.1 8b q4_k_m",
        r#"lang=en gpus=rtx3090 model=llama-3.1-8b precision=int4"#,
    );
    check("ok 2 of them then", r#"lang=en count=2"#);
    check("v100s how much /mo", r#"lang=en gpus=v100s-32g cues=price"#);
    check(
        "how many cards is that",
        r#"lang=en cues=recommend,count.ask,card.referred topics=hbm-bandwidth"#,
    );
    check("打算用 SGLang 部署 Qwen2.5-32B-Instruct-AWQ，peak QPS 2 左右，平均一个请求 15s，context 8k，租啥卡合适？", r#"lang=zh model=qwen2.5-32b task=inference precision=int4 context=8192 qps=2 cues=recommend topics=framework,concurrency"#);
    check("Contract-review use case: each contract is about 20k tokens, 5 paralegals use it at the same time, model is Qwen2.5-32B-Instruct.", r#"lang=en model=qwen2.5-32b context=20480 concurrency=5 topics=compliance"#);
    check(
        "We already own 4x V100 32GB. Can they run Llama-3.3-70B in fp16 for a handful of users?",
        r#"lang=en gpus=v100s-32g count=4 model=llama-3.3-70b task=inference precision=fp16 cues=feasibility"#,
    );
    check("Are your A100s new or pulled from old mining rigs? Our last provider handed us a 40GB card labelled as 80GB.", r#"lang=en gpus=a100-40g,a100-80g plural=yes cues=card.yours topics=used-cards"#);
    // Two topics tied: both; a tie for whether a named card will do: none.
    check(
        "用户一半在北美一半在国内，机器该放哪边",
        r#"lang=zh topics=multi-region,network"#,
    );
    check(
        "需要 80G 显存，A100 40G 够吗",
        r#"lang=zh gpus=a100-40g cues=feasibility"#,
    );
    check("and the 80G version?", r#"lang=en cues=followup"#);
}

#[test]
fn tools_named_after_models_regional_words_training_on_cards_without_bf16_and_totals_for_a_semester(
) {
    // LLaMA-Factory is a tool; 程式碼, 支援 are Taiwan's words for code and supports.
    check(
        "從 CUDA 遷到昇騰 910B 要改多少程式碼？LLaMA-Factory 支援嗎",
        r#"lang=zh gpus=ascend-910b cues=domestic topics=ascend,fp8"#,
    );
    check(
        "伺服器的顯示卡記憶體夠跑 Qwen2.5-14B 嗎",
        r#"lang=zh model=qwen2.5-14b task=inference cues=feasibility"#,
    );
    // Training on a card without BF16, no model: the pitfall, whatever words ask it.
    check(
        "Our cloud credits only cover T4s. Is it a bad idea to run LoRA training on those?",
        r#"lang=en gpus=t4 plural=yes task=lora cues=card.referred topics=pitfall-inference-card-training,pitfall-no-nvlink-multi-gpu"#,
    );
    check(
        "V100S 拿来做全参训练靠谱吗",
        r#"lang=zh gpus=v100s-32g task=full topics=pitfall-inference-card-training,consumer-vs-datacenter"#,
    );
    // A card with BF16 asked the same way is not that pitfall.
    check(
        "A100 拿来做训练靠谱吗",
        r#"lang=zh gpus=a100-40g task=full topics=consumer-vs-datacenter"#,
    );
    check(
        "组里想租一台 8 卡机器，白天训练，晚上给大家跑推理 demo，这样合理吗？",
        r#"lang=zh count=8 task=full cues=machine topics=pitfall-one-machine-both"#,
    );
    // A total for the semester; "per month" in the next sentence is the question's.
    check(
        "I have a $3,000 budget for the whole semester (4 months). What can I rent per month with that?",
        r#"lang=en budget=5400 months=4 cues=feasibility,price,budget"#,
    );
    check(
        "整个学期预算 1 万 5，四个月，能租啥",
        r#"lang=zh budget=3750 months=4 cues=budget,recommend"#,
    );
}

#[test]
fn series_declined_euros_grand_bare_counts_at_once_and_questions_of_why() {
    check(
        "no H-series please, what else can do it?",
        r#"lang=en cues=feasibility"#,
    );
    check(
        "不要 H 卡，还有别的方案吗",
        r#"lang=zh cues=recommend topics=hidden-fees,framework"#,
    );
    check(
        "Our budget is €800 a month. What GPU setup can we get for that?",
        r#"lang=en budget=6560 cues=budget,recommend"#,
    );
    check(
        "budget is about 2 grand USD a month, 20 agents use it at the same time",
        r#"lang=en concurrency=20 budget=14400 cues=budget"#,
    );
    check("10 at the same time", r#"lang=en concurrency=10"#);
    check("what do we rent?", r#"lang=en cues=recommend.ask"#);
    check("思考链很长，上下文给 32k", r#"lang=zh context=32768"#);
    check("and for 3k?", r#"lang=en cues=followup"#);
    check("大概几个小时能跑完", r#"lang=zh cues=feasibility"#);
    check(
        "is H100 really worth 3x the rent of A100? we mostly do inference of 7B-14B models",
        r#"lang=en gpus=h100-sxm,a100-40g size=7 task=inference cues=compare"#,
    );
    check("why is decode on a 4090 so much slower than on an H100 for the same 8B model when the TFLOPS numbers look kinda similar?", r#"lang=en gpus=rtx4090,h100-sxm size=8 cues=compare,why topics=pitfall-tflops-only"#);
}

#[test]
fn the_h_series_declined_is_every_hopper_card() {
    let hopper: Vec<String> = advisor()
        .catalog
        .gpus
        .iter()
        .filter(|g| g.arch == "Hopper")
        .map(|g| g.id.clone())
        .collect();
    assert!(
        hopper.len() >= 2,
        "the catalog has Hopper cards: {hopper:?}"
    );
    for q in [
        "no H-series please, what else can do it?",
        "不要 H 卡，还有别的方案吗",
        "别用 H 系列",
    ] {
        let mut declined = advisor()
            .parser
            .parse(q, advisor().catalog.billing.usd_cny)
            .asked
            .declined;
        declined.sort();
        let mut want = hopper.clone();
        want.sort();
        assert_eq!(declined, want, "{q:?}");
    }
    // A Hopper card named is not a series declined.
    let a = advisor()
        .parser
        .parse("h20 卡能跑 Qwen3-32B 吗", advisor().catalog.billing.usd_cny)
        .asked;
    assert!(a.declined.is_empty());
}

#[test]
fn digits_and_sizes_spoken_as_words() {
    check(
        "四零九零能跑deepseek r1 七十b吗 就是那个蒸馏版 用ollama跑",
        r#"lang=zh gpus=rtx4090 model=deepseek-r1-distill-llama-70b task=inference precision=int4 cues=feasibility topics=framework"#,
    );
    check(
        "hey can a single forty ninety run llama 3.1 8b in full precision",
        r#"lang=en gpus=rtx4090 count=1 model=llama-3.1-8b task=inference cues=feasibility"#,
    );
    check(
        "三零九零跟四零九零到底差多少啊 租哪个划算",
        r#"lang=zh gpus=rtx3090,rtx4090 cues=compare,recommend"#,
    );
}

#[test]
fn a_task_refused_teams_counted_hearsay_and_the_fewest_cards() {
    // A bare 不 before the task word refuses it.
    check(
        "Qwen3-8B 想部署成内部知识库问答，纯推理不训练，租哪张卡最省钱？",
        "lang=zh model=qwen3-8b task=inference cues=recommend",
    );
    // A team served counts its people at once, unless one request is in flight at a time.
    check(
        "Serving Qwen2.5-14B q4_k_m through ollama for a 5-person team, which card?",
        "lang=en model=qwen2.5-14b task=inference precision=int4 concurrency=5 cues=recommend topics=framework",
    );
    check(
        "a client runs Mistral-Small-24B with Ollama for a 5-person team that sends one request at a time",
        "lang=en model=mistral-small-3-24b precision=int4 concurrency=1 topics=framework",
    );
    // Someone else's run is an aside: the card asked about is the customer's own.
    check(
        "One guy finished a QLoRA of a 70B on a single 80GB A100. We only budgeted one A100 40G - will QLoRA on Llama-3-70B fit on it?",
        "lang=en gpus=a100-40g count=1 model=llama-3-70b task=qlora cues=feasibility topics=pitfall-4090-70b",
    );
    check(
        "what's the minimum number of H100s for a full-parameter finetune of gpt-oss-120b? we keep OOMing",
        "lang=en gpus=h100-sxm plural=yes model=gpt-oss-120b task=full cues=count.ask",
    );
    // A dot inside a word ("llama.cpp") does not end the "or" of a comparison.
    check(
        "3090 or 4090 for running 7B–13B locally w/ llama.cpp? the tok/s benchmarks look pretty close tbh",
        "lang=en gpus=rtx3090,rtx4090 size=7 task=inference cues=compare topics=framework",
    );
    let p = advisor().parser.parse(
        "we aren't required to use domestic chips. for qwen2.5-14b lora what would you pick?",
        advisor().catalog.billing.usd_cny,
    );
    assert!(!p.asked.domestic);
}

#[test]
fn loads_and_limits_said_in_passing_and_a_factor_that_is_not_a_count() {
    check(
        "我们要 serve 一个 Qwen3-30B-A3B，用 vllm，concurrent users 大概 40",
        "lang=zh model=qwen3-30b-a3b task=inference concurrency=40 topics=concurrency,framework",
    );
    // The request size after "concurrent requests of" is not their number.
    check(
        "Llama-3.3-70B FP8 on 2x H100 TP2 via NIM (TensorRT-LLM), 25 concurrent requests of 5000 in / 500 out: per-user generation speed?",
        "lang=en gpus=h100-sxm count=2 model=llama-3.3-70b precision=fp8 context=5500 concurrency=25 output=500 topics=framework,concurrency,fp8",
    );
    check(
        "what if we cap the context at 32k instead?",
        "lang=en context=32768 cues=followup",
    );
    check(
        "and how does the V100S stack up against the 3090?",
        "lang=en gpus=v100s-32g,rtx3090 cues=compare,followup",
    );
    // "翻一倍" doubles the concurrency said before; its 一 is not a count of users.
    check(
        "那如果并发翻一倍",
        "lang=zh cues=followup topics=concurrency",
    );
}

#[test]
fn a_card_the_provider_is_said_not_to_have_is_declined() {
    for q in [
        "you don't rent H200 as far as I can tell, so what would you put it on instead?",
        "H200 isn't on your list I guess. so what's the cheapest way you can actually host full R1?",
    ] {
        let p = advisor().parser.parse(q, advisor().catalog.billing.usd_cny);
        assert_eq!(p.asked.declined, ["h200"], "{q:?}");
    }
    // A card that lacks a feature is not declined.
    let p = advisor().parser.parse(
        "4090 没有 NVLink，两张能跑 Qwen2.5-32B 吗",
        advisor().catalog.billing.usd_cny,
    );
    assert!(p.asked.declined.is_empty());
}

#[test]
fn an_active_size_a_batch_said_with_only_a_halved_budget_and_people_counted_daily() {
    let parse = |q: &str| advisor().parser.parse(q, advisor().catalog.billing.usd_cny);
    // The active size of the model talked about is no model size of its own.
    let p =
        parse("since only ~5B params are active per token, a single 4090 should hold it, right?");
    assert_eq!(p.asked.size_b, None);
    assert_eq!(
        parse("a 120b moe with 5.1b active").asked.size_b,
        Some(120.0)
    );
    assert_eq!(parse("batch 就 1").asked.micro_batch, Some(1));
    assert_eq!(
        parse("update: the budget is now half of that")
            .asked
            .scaled
            .map(|s| s.0),
        Some(0.5)
    );
    check(
        "全集团大概 2000 名员工每天会用，上下文 4k 以内就够。",
        "lang=zh context=4096 daily=2000 cues=feasibility",
    );
    check("所里同时在用的人一般不超过 8 个。", "lang=zh concurrency=8");
}

#[test]
fn the_width_switched_to_and_a_cheaper_plan_asked_in_cantonese() {
    check(
        "3090 不支持 FP8 的话，换成 INT8 呢？",
        "lang=zh gpus=rtx3090 precision=int8 cues=followup topics=fp8",
    );
    check(
        "What if we switch to fp16 instead of int4?",
        "lang=en precision=fp16 cues=followup",
    );
    check(
        "有冇平啲嘅方案？",
        "lang=zh cues=recommend,cheapest.ask topics=pitfall-annual-contract,pitfall-unit-price-only",
    );
}

#[test]
fn the_largest_load_said_is_the_one_sized() {
    let p = advisor().parser.parse(
        "when two or three colleagues chat at once the answers come one by one. I'd like to set OLLAMA_NUM_PARALLEL=4 so up to four people can get answers simultaneously.",
        advisor().catalog.billing.usd_cny,
    );
    assert_eq!(p.asked.concurrency, Some(4));
    // A peak said is the load, whatever else is said.
    check(
        "平时同时在线十来个，高峰 25 个左右",
        "lang=zh concurrency=25 topics=concurrency",
    );
}

#[test]
fn rates_market_prices_and_colloquial_counts() {
    // A token count per day is a rate someone claims, not the data set.
    check("8 A100s can get through something like 10T tokens a day, so pretraining a 7B on 2T tokens is basically a weekend job, right?", "lang=en gpus=a100-40g count=8 size=7 task=pretrain tokens=2000000000000 cues=belief.confirm");
    check(
        "每天能处理 5 亿 token 的话，继续预训练 7B 用 200 亿 token 要多久",
        "lang=zh size=7 task=pretrain tokens=20000000000",
    );
    // "仨" is three, "俩" two.
    check(
        "3090 租仨月多少钱",
        "lang=zh gpus=rtx3090 months=3 cues=price",
    );
    check(
        "俩 4090 能跑 32B 吗",
        "lang=zh gpus=rtx4090 count=2 size=32 task=inference cues=feasibility",
    );
    // A price seen on the market is no budget.
    check(
        "網上見到 A100 一個月千幾蚊就租到，係咪拆機翻新貨嚟㗎？",
        "lang=zh gpus=a100-40g months=1 topics=pitfall-used-cards,used-cards",
    );
    check(
        "what's the rate for a single H100 if I only need it for a few hours?",
        "lang=en gpus=h100-sxm count=1 cues=price,recommend",
    );
    // Symptoms: memory seen taken, a transfer that does not finish.
    check(
        "vllm 起了个 1.5B 的小模型，nvidia-smi 一看显存吃了 21G，是不是哪里漏了",
        "lang=zh size=1.5 cues=diagnostic topics=pitfall-small-model-h100,framework,monitoring",
    );
    check(
        "在机器上拉 70B 的权重，一百四十多 G 拉了大半天还没完，你们的带宽到底多大",
        "lang=zh size=70 cues=diagnostic topics=network",
    );
}

#[test]
fn beliefs_moves_and_counts_of_models() {
    // A belief put for confirmation, and what a move between cards would gain.
    check("Isn't a 4090's FP16 basically on par with an A100? We're thinking of training on a rack of 4090s instead.", "lang=en gpus=rtx4090,a100-40g task=full precision=fp16 cues=followup,belief.confirm topics=pitfall-inference-card-training,consumer-vs-datacenter,pitfall-no-nvlink-multi-gpu");
    check("H100 跑 7B 跟 3090 其实差不多快吧？那花这么多钱图啥", "lang=zh gpus=h100-sxm,rtx3090 size=7 task=inference cues=overkill,belief.confirm topics=pitfall-small-model-h100");
    check("现在 8 张 A100 跑一轮 SFT 要 30 个小时，换成 H100 能快多少？租金贵了好几倍，值不值", "lang=zh gpus=a100-40g,h100-sxm count=8 task=lora cues=compare,price,followup,worth.ask,move.ask topics=upgrade-h100");
    // "one model" counts models, not parameters; "350M model" is a size.
    check("the 3090 has no NVLink whatsoever, right? so two of them can't split one model between them", "lang=en gpus=rtx3090 count=2 cues=belief.confirm topics=pitfall-no-nvlink-multi-gpu,nvlink,multi-region");
    check(
        "train a 350M model from scratch on 10B tokens, what do I rent?",
        "lang=en size=0.35 task=pretrain tokens=10000000000 cues=recommend.ask",
    );
    // The only token count is a rate: it is the data.
    check(
        "8 张 A100 一天训 10T token 没问题吧？准备从头预训练一个 7B，10T 数据争取一天跑完",
        "lang=zh gpus=a100-40g count=8 size=7 task=pretrain tokens=10000000000000 cues=feasibility",
    );
    // A difference on the bill is no budget.
    check(
        "这个月账单比销售报的月租多了快一千块，卡数没变，多出来的是哪部分钱？",
        "lang=zh cues=compare,price topics=hidden-fees",
    );
}

#[test]
fn a_method_said_as_when_something_else_happens_is_not_the_task() {
    check(
        "微调完就退租，退掉以后数据盘上的数据你们怎么处理？",
        "lang=zh topics=compliance,pitfall-annual-contract,storage",
    );
    check(
        "Once fine-tuning is done we'll cancel the box. Do you wipe the disks?",
        "lang=en topics=compliance,pitfall-annual-contract",
    );
    // Asked how long it takes, the method stays.
    check(
        "微调完要多久",
        "lang=zh task=lora topics=pitfall-one-machine-both",
    );
}
