//! The recipe a question states: attention implementation, activation checkpointing,
//! logits, quantisation library, LoRA rank and targets, framework and ZeRO stage, each
//! read by its `recipe.*` lexicon entry (intents/slots.toml). What is not said stays
//! `None`: the workload's documented default.

use crate::advisor::lexicon::{Lexicon, Scan, Slot};
use crate::advisor::workload::{
    Asked, Attention, Framework, Logits, LoraTargets, QuantLib, Recipe,
};

/// Reads the recipe into `a.recipe`; returns whether any of it was stated (a follow-up
/// such as "不开 FlashAttention 呢" modifies the previous workload).
pub fn read(lex: &Lexicon, scan: &Scan, text: &str, a: &mut Asked) -> bool {
    let first = |pairs: &[(Slot, u8)]| {
        pairs
            .iter()
            .find(|&&(s, _)| lex.has_in(scan, s))
            .map(|&(_, v)| v)
    };
    let attention = first(&[
        (Slot::RecipeAttentionEager, 0),
        (Slot::RecipeAttentionSdpa, 1),
        (Slot::RecipeAttentionFlash, 2),
    ])
    .map(|v| [Attention::Eager, Attention::Sdpa, Attention::Flash][v as usize]);
    let checkpointing = first(&[
        (Slot::RecipeCheckpointingOff, 0),
        (Slot::RecipeCheckpointingOn, 1),
    ])
    .map(|v| v == 1);
    let logits = first(&[(Slot::RecipeLogitsLast, 0), (Slot::RecipeLogitsFull, 1)])
        .map(|v| [Logits::Last, Logits::Full][v as usize]);
    let quant_lib = first(&[
        (Slot::RecipeQuantBnbNf4, 0),
        (Slot::RecipeQuantBnbInt8, 1),
        (Slot::RecipeQuantGptq, 2),
        (Slot::RecipeQuantAwq, 3),
        (Slot::RecipeQuantTorchao, 4),
        (Slot::RecipeQuantGguf, 5),
    ])
    .map(|v| {
        [
            QuantLib::BnbNf4,
            QuantLib::BnbInt8,
            QuantLib::Gptq,
            QuantLib::Awq,
            QuantLib::Torchao,
            QuantLib::Gguf,
        ][v as usize]
    });
    let lora_targets = first(&[
        (Slot::RecipeLoraTargetsAll, 0),
        (Slot::RecipeLoraTargetsAttention, 1),
        (Slot::RecipeLoraTargetsQueryValue, 2),
    ])
    .map(|v| {
        [
            LoraTargets::AllLinear,
            LoraTargets::Attention,
            LoraTargets::QueryValue,
        ][v as usize]
    });
    // The more specific tool first: "LLaMA-Factory + DeepSpeed" is LLaMA-Factory's recipe.
    let framework = first(&[
        (Slot::RecipeFrameworkAutoawq, 8),
        (Slot::RecipeFrameworkLitgpt, 0),
        (Slot::RecipeFrameworkTorchtune, 1),
        (Slot::RecipeFrameworkMsSwift, 2),
        (Slot::RecipeFrameworkLlamaFactory, 3),
        (Slot::RecipeFrameworkUnsloth, 4),
        (Slot::RecipeFrameworkPeft, 5),
        (Slot::RecipeFrameworkTransformers, 6),
        (Slot::RecipeFrameworkDeepspeed, 7),
    ])
    .map(|v| {
        [
            Framework::Litgpt,
            Framework::Torchtune,
            Framework::MsSwift,
            Framework::LlamaFactory,
            Framework::Unsloth,
            Framework::Peft,
            Framework::Transformers,
            Framework::Deepspeed,
            Framework::Autoawq,
        ][v as usize]
    });
    // LoRA ranks are powers of two in every recipe; 1–1024 is the sensible range.
    let lora_rank = lex
        .find_in(scan, Slot::RecipeLoraRank, text, false)
        .map(|f| f.value)
        .filter(|r| (1.0..=1024.0).contains(r) && r.fract() == 0.0)
        .map(|r| r as u32);
    let zero_stage = lex
        .find_in(scan, Slot::RecipeZeroStage, text, false)
        .map(|f| f.value)
        .filter(|s| (0.0..=3.0).contains(s))
        .map(|s| s as u8);
    a.recipe = Recipe {
        attention,
        checkpointing,
        logits,
        quant_lib,
        lora_rank,
        lora_targets,
        framework,
        zero_stage,
    };
    a.recipe.stated()
}

#[cfg(test)]
mod tests {
    use crate::advisor::fixtures::advisor;

    /// The recipe `question` states, as its JSON (what was not said is left out).
    fn check(question: &str, expected: &str) {
        let p = advisor()
            .parser
            .parse(question, advisor().catalog.billing.usd_cny);
        let got = serde_json::to_string(&p.asked.recipe).expect("json");
        assert_eq!(got, expected, "{question:?}");
    }

    #[test]
    fn each_part_of_the_recipe() {
        check(
            "DeepSeek-LLM-7B BF16 推理，并发 2，上下文 1k，HF transformers，eager attention",
            r#"{"attention":"eager","framework":"transformers"}"#,
        );
        check(
            "Llama-2-7B LoRA 微调，序列 1304，不开梯度检查点",
            r#"{"checkpointing":false}"#,
        );
        check(
            "Llama-2-13B-Chat GPTQ-Int4 推理，上下文 1k",
            r#"{"quant_lib":"gptq"}"#,
        );
        check("Llama-2-7B NF4 推理", r#"{"quant_lib":"bnb-nf4"}"#);
        check(
            "LitGPT LoRA r=8 on query+value, flash attention, gradient checkpointing",
            r#"{"attention":"flash","checkpointing":true,"lora_rank":8,"lora_targets":"query-value","framework":"litgpt"}"#,
        );
        check(
            "Qwen2.5-72B 全参，LLaMA-Factory + DeepSpeed ZeRO-3",
            r#"{"framework":"llama-factory","zero_stage":3}"#,
        );
        check(
            "不开 FlashAttention 时 32k 上下文要多少显存，logits 只算最后一个 token 的 logits",
            r#"{"attention":"eager","logits":"last"}"#,
        );
        check(
            "Mistral-7B AWQ 推理，并发 8，上下文 4k，AutoAWQ",
            r#"{"quant_lib":"awq","framework":"autoawq"}"#,
        );
        check("Qwen2.5-7B 推理用什么卡", "{}");
    }

    #[test]
    fn a_follow_up_keeps_the_recipe_said_before() {
        let parse = |q: &str| {
            advisor()
                .parser
                .parse(q, advisor().catalog.billing.usd_cny)
                .asked
        };
        let first = parse("Llama-2-7B LoRA 微调，不开梯度检查点，LitGPT");
        let next = parse("换成 eager attention 呢");
        let merged = next.over(&first);
        let got = serde_json::to_string(&merged.recipe).expect("json");
        assert_eq!(
            got,
            r#"{"attention":"eager","checkpointing":false,"framework":"litgpt"}"#
        );
    }
}
