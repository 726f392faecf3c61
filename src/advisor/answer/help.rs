//! Greetings, questions the advisor does not answer, and refusals of what cannot be right
//! (a negative size, absurd numbers): what the bot does and three questions to try.

use super::context::Context;
use crate::advisor::contract::Answer;
use crate::advisor::parse::{Invalid, Lang};
use crate::advisor::reply::t;

/// Greeting or unknown question: what the bot does and three questions to try.
pub fn help(ctx: &Context<'_>, ans: &mut Answer, unknown: bool) {
    let lang = ctx.lang;
    let r = &mut ans.rendered;
    if let Some(i) = &ctx.parsed.invalid {
        r.text(invalid_text(i, lang));
    } else if unknown {
        r.text(t(
            lang,
            "这个问题我没看懂，我只回答 GPU 租用和大模型选卡的问题。",
            "I did not catch that: I answer questions about renting GPUs for AI models.",
        ));
        // The nearest knowledge topics, when the question came close to some.
        let near: Vec<String> = ctx
            .parsed
            .near_topics
            .iter()
            .filter_map(|id| ctx.cat.topic(id))
            .map(|tp| match lang {
                Lang::Zh => tp.title_zh.clone(),
                Lang::En => tp.title_en.clone(),
            })
            .collect();
        if !near.is_empty() {
            r.text(t(lang, "你是不是想问：", "Did you mean one of these:"));
            r.bullets(near);
        }
    } else {
        r.title(t(
            lang,
            "你好，我是 GPU 选型顾问",
            "Hi, I am the GPU rental advisor",
        ));
        r.text(t(
            lang,
            "告诉我模型、任务（推理 / LoRA / 全参 / 预训练）、精度、并发或预算，我按显存估算推荐最省钱的配置并报价。",
            "Tell me the model, the task (inference / LoRA / full fine-tune / pretraining), precision, concurrency or budget: I estimate the GPU memory and quote the cheapest configuration that fits.",
        ));
    }
    r.text(t(lang, "可以这样问：", "Try:"));
    r.bullets(match lang {
        Lang::Zh => vec![
            "微调 Qwen-14B 要什么卡?".into(),
            "4090 能跑 70B 吗".into(),
            "预算三千五能干嘛".into(),
        ],
        Lang::En => vec![
            "What GPU do I need to fine-tune Qwen-14B?".into(),
            "Can a 4090 run a 70B model?".into(),
            "What can I rent for $500 a month?".into(),
        ],
    });
}

/// Why a question was refused, for the reply.
pub fn invalid_text(i: &Invalid, lang: Lang) -> String {
    match (i, lang) {
        (Invalid::NegativeSize(b), Lang::Zh) => format!("模型大小不能是负数（读到 -{b}B）。请告诉我参数量，例如「Qwen-14B 推理」或「一个 30B 的模型」。"),
        (Invalid::NegativeSize(b), Lang::En) => format!("A model size cannot be negative (read -{b}B). Tell me the parameter count, e.g. \"Qwen-14B inference\" or \"a 30B model\"."),
        (Invalid::HugeSize(b), Lang::Zh) => format!("{b:.0}B 参数远超现有任何模型（最大的公开模型约 2T 参数），请确认模型大小。"),
        (Invalid::HugeSize(b), Lang::En) => format!("{b:.0}B parameters is beyond any existing model (the largest public ones are ~2T); please check the size."),
        (Invalid::HugeNumber(what, v), Lang::Zh) => format!("{what} = {v:.0} 超出了合理范围，请确认数字。"),
        (Invalid::HugeNumber(what, v), Lang::En) => format!("{what} = {v:.0} is out of any sensible range; please check the number."),
    }
}
