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
