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
