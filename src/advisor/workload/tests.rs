use super::*;
use crate::advisor::fixtures::advisor;

/// What `asked` resolves to, as "model task precision context concurrency micro-batch"
/// ("-" for none), or "none" when there is no workload.
fn check(asked: Asked, expected: &str) {
    let got = match Workload::resolve(&asked, &advisor().catalog) {
        None => "none".to_string(),
        Some(w) => format!(
            "{} {} {} {} {} {}",
            w.model.as_deref().unwrap_or("-"),
            w.task_id(),
            w.precision.id(),
            w.context,
            w.concurrency,
            w.micro_batch.map_or("-".to_string(), |m| m.to_string()),
        ),
    };
    assert_eq!(got, expected, "{asked:?}");
}

impl Workload {
    fn task_id(&self) -> &'static str {
        match self.task {
            Task::Inference => "inference",
            Task::Lora => "lora",
            Task::Qlora => "qlora",
            Task::Full => "full",
            Task::Pretrain => "pretrain",
        }
    }
}

fn model(id: &str) -> Asked {
    Asked {
        model: Some(id.into()),
        ..Asked::default()
    }
}

#[test]
fn defaults_differ_for_serving_and_training() {
    check(model("qwen-7b"), "qwen-7b inference bf16 4096 1 -");
    let lora = Asked {
        task: Some(Task::Lora),
        concurrency: Some(8),
        ..model("qwen-14b")
    };
    // Training has no concurrency; its sequence defaults to 2048 and micro-batch to 1.
    check(lora, "qwen-14b lora bf16 2048 1 1");
    check(Asked::default(), "none");
}

#[test]
fn precision_follows_the_task_and_the_released_weights() {
    // Served at the precision the weights were released in.
    check(model("deepseek-r1"), "deepseek-r1 inference fp8 4096 1 -");
    // LoRA on a 4-bit base is QLoRA; training computes in 16-bit, not FP8.
    let qlora = Asked {
        task: Some(Task::Lora),
        precision: Some(Precision::Int4),
        ..model("qwen-7b")
    };
    check(qlora, "qwen-7b qlora int4 2048 1 1");
    let full = Asked {
        task: Some(Task::Full),
        precision: Some(Precision::Fp8),
        ..model("qwen-7b")
    };
    check(full, "qwen-7b full bf16 2048 1 1");
    let lora8 = Asked {
        task: Some(Task::Lora),
        precision: Some(Precision::Int8),
        ..model("qwen-7b")
    };
    check(lora8, "qwen-7b lora int8 2048 1 1");
}

#[test]
fn a_bare_size_is_a_generic_decoder() {
    let a = Asked {
        size_b: Some(30.0),
        context: Some(32768),
        concurrency: Some(16),
        ..Asked::default()
    };
    check(a.clone(), "- inference bf16 32768 16 -");
    let w = Workload::resolve(&a, &advisor().catalog).expect("workload");
    assert_eq!(w.arch.params_b, 30.0);
    assert!(!w.arch.diffusion);
}

#[test]
fn a_follow_up_overrides_only_what_it_states() {
    let first = Asked {
        task: Some(Task::Lora),
        context: Some(8192),
        ..model("qwen-14b")
    };
    // "INT4 呢": the precision changes, the rest stays.
    let int4 = Asked {
        precision: Some(Precision::Int4),
        ..Asked::default()
    }
    .over(&first);
    check(int4, "qwen-14b qlora int4 8192 1 1");
    // "推理呢": a training sequence is not a serving context.
    let serve = Asked {
        task: Some(Task::Inference),
        ..Asked::default()
    }
    .over(&first);
    check(serve, "qwen-14b inference bf16 4096 1 -");
    // "那 70B 呢": a new size replaces the named model.
    let size = Asked {
        size_b: Some(70.0),
        ..Asked::default()
    }
    .over(&first);
    check(size, "- lora bf16 8192 1 1");
}

#[test]
fn constraints_persist_until_replaced() {
    let first = Asked {
        budget_cny: Some(4000.0),
        months: Some(3.0),
        domestic: true,
        concurrency: Some(20),
        serving: ServingAsk {
            engine: Some(Engine::Sglang),
            ..ServingAsk::default()
        },
        ..model("qwen2.5-7b")
    };
    // "switch to Llama-3.1-8B": the model changes, every constraint stays.
    let m = model("llama-3.1-8b").over(&first);
    assert_eq!(m.budget_cny, Some(4000.0));
    assert_eq!(m.months, Some(3.0));
    assert!(m.domestic);
    assert_eq!(m.concurrency, Some(20));
    assert_eq!(m.serving.engine, Some(Engine::Sglang));
    // "不要国产了": the domestic wish is cleared, and stays cleared.
    let no = Asked {
        no_domestic: true,
        ..Asked::default()
    }
    .over(&m);
    assert!(!no.domestic);
    assert!(!Asked::default().over(&no).domestic);
    // "预算再多 1500", "并发少 5 个": relative to the last turn.
    let more = Asked {
        budget_change: Some(1500.0),
        concurrency_change: Some(-5),
        ..Asked::default()
    }
    .over(&m);
    assert_eq!(more.budget_cny, Some(5500.0));
    assert_eq!(more.concurrency, Some(15));
    assert_eq!(more.budget_change, None);
}

#[test]
fn a_declined_card_is_no_longer_the_card_asked_about() {
    let first = Asked {
        gpu: Some("h100-sxm".into()),
        gpus: vec!["h100-sxm".into()],
        gpu_count: Some(8),
        ..model("qwen2.5-72b")
    };
    let m = Asked {
        declined: vec!["h100-sxm".into()],
        ..Asked::default()
    }
    .over(&first);
    assert_eq!((m.gpu.clone(), m.gpu_count), (None, None));
    assert!(m.gpus.is_empty());
    assert_eq!(m.declined, ["h100-sxm"]);
    // Named again later, it is asked for again.
    let again = Asked {
        gpu: Some("h100-sxm".into()),
        gpus: vec!["h100-sxm".into()],
        ..Asked::default()
    }
    .over(&m);
    assert!(again.declined.is_empty());
    assert_eq!(again.gpu.as_deref(), Some("h100-sxm"));
}

#[test]
fn a_batch_follow_up_is_the_micro_batch_of_training_and_the_load_of_serving() {
    let batch = Asked {
        micro_batch: Some(8),
        ..Asked::default()
    };
    let train = Asked {
        task: Some(Task::Lora),
        micro_batch: Some(2),
        ..model("qwen2.5-7b")
    };
    check(batch.over(&train), "qwen2.5-7b lora bf16 2048 1 8");
    let serve = Asked {
        task: Some(Task::Inference),
        concurrency: Some(4),
        ..model("qwen2.5-7b")
    };
    check(batch.over(&serve), "qwen2.5-7b inference bf16 4096 8 -");
}

#[test]
fn a_size_alone_after_a_named_model_is_its_family_at_that_size() {
    let sib = |m: &str, s: f64| sized_sibling(&advisor().catalog, m, s);
    assert_eq!(sib("qwen2.5-7b", 32.0).as_deref(), Some("qwen2.5-32b"));
    assert_eq!(
        sib("llama-3.1-8b", 405.0).as_deref(),
        Some("llama-3.1-405b")
    );
    assert_eq!(
        sib("qwen2.5-coder-7b", 32.0).as_deref(),
        Some("qwen2.5-coder-32b")
    );
    assert_eq!(
        sib("deepseek-r1-distill-qwen-7b", 1.5).as_deref(),
        Some("deepseek-r1-distill-qwen-1.5b")
    );
    // Qwen3's 30B is the MoE, not the coder of the same family.
    assert_eq!(sib("qwen3-8b", 30.0).as_deref(), Some("qwen3-30b-a3b"));
    // The only distilled 14B, though its base is another family.
    assert_eq!(
        sib("deepseek-r1-distill-llama-8b", 14.0).as_deref(),
        Some("deepseek-r1-distill-qwen-14b")
    );
    // No such size in the family, or no size in the name: a generic model.
    assert_eq!(sib("qwen2.5-7b", 13.0), None);
    assert_eq!(sib("mixtral-8x7b", 22.0), None);
}

#[test]
fn a_bare_number_changes_what_the_last_turn_stated() {
    let to = |v: f64| Asked {
        changed_to: Some(v),
        ..Asked::default()
    };
    let budget = Asked {
        budget_cny: Some(6000.0),
        concurrency: Some(10),
        ..model("qwen2.5-14b")
    };
    assert_eq!(to(3000.0).over(&budget).budget_cny, Some(3000.0));
    let load = Asked {
        concurrency: Some(10),
        ..model("qwen2.5-14b")
    };
    assert_eq!(to(40.0).over(&load).concurrency, Some(40));
}
