//! A model the catalog does not know. Without a size: say so and ask for its parameter
//! count (and whether it is MoE), with one example of how to ask. With a size, the
//! workload answer runs on a generic model of that size and `generic_note` says so.

use super::context::Context;
use crate::advisor::catalog::{normalize_alias, Catalog};
use crate::advisor::contract::Answer;
use crate::advisor::parse::Lang;
use crate::advisor::reply::params;
use crate::advisor::workload::{Asked, Workload};

/// The name as the question wrote it, cut to a sane length for the reply.
fn shown(name: &str) -> String {
    name.chars().take(40).collect()
}

/// The catalog's models of the family `name` is ("Qwen3": Qwen3-0.6B … Qwen3-235B-A22B),
/// in catalog order; empty when `name` is no family of the catalog.
pub fn family_members(cat: &Catalog, name: &str) -> Vec<String> {
    let family = normalize_alias(name);
    cat.models
        .iter()
        .filter(|m| normalize_alias(&m.family) == family)
        .map(|m| m.name.clone())
        .collect()
}

/// Catalog models of the same family as `name` (its leading letters), at most three:
/// offered as names to ask about, never silently substituted.
fn relatives(cat: &Catalog, name: &str) -> Vec<String> {
    let lower = name.to_lowercase();
    let family: String = if lower.starts_with(|c: char| c.is_ascii_alphabetic()) {
        lower
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
            .collect()
    } else {
        lower.chars().take_while(|c| !c.is_ascii()).collect()
    };
    let family = normalize_alias(&family);
    if family.chars().count() < 2 {
        return Vec::new();
    }
    cat.models
        .iter()
        .rev()
        .filter(|m| {
            m.aliases
                .iter()
                .chain(std::iter::once(&m.id))
                .any(|a| normalize_alias(a).starts_with(&family))
        })
        .take(3)
        .map(|m| m.name.clone())
        .collect()
}

/// No size: the model is not known; ask for what the estimate needs.
pub fn ask(ctx: &Context<'_>, ans: &mut Answer) {
    let name = shown(ctx.parsed.unknown_model.as_deref().unwrap_or_default());
    let members = family_members(ctx.cat, &name);
    let r = &mut ans.rendered;
    // A family named without its size ("Qwen3"): which one of it.
    if !members.is_empty() {
        match ctx.lang {
            Lang::Zh => {
                r.text(format!(
                    "「{name}」是一个系列，不同尺寸显存差别很大。目录里有：{}。请说是哪一个（或它的参数量）。",
                    members.join("、")
                ));
            }
            Lang::En => {
                r.text(format!(
                    "\"{name}\" is a family, and its sizes need very different memory. The catalog has: {}. Which one do you mean (or its parameter count)?",
                    members.join(", ")
                ));
            }
        }
        return;
    }
    let near = relatives(ctx.cat, &name);
    match ctx.lang {
        Lang::Zh => {
            r.text(format!(
                "目录里还没有「{name}」这个模型，我不知道它的参数量，没法按它估算显存。"
            ));
            r.text(
                "请告诉我它的总参数量，以及是不是 MoE（MoE 再说每个 token 激活多少参数），例如：「一个 120B 的 MoE 模型、激活 5B，推理要什么卡」。",
            );
            if !near.is_empty() {
                r.text(format!(
                    "目录里同一家族的有：{}，也可以直接问它们。",
                    near.join("、")
                ));
            }
        }
        Lang::En => {
            r.text(format!(
                "\"{name}\" is not in my model catalog yet: I do not know its size, so I cannot estimate its memory."
            ));
            r.text(
                "Tell me its total parameter count and whether it is a MoE (and then its active parameters), e.g. \"a 120B MoE model with 5B active: what GPU for inference?\"",
            );
            if !near.is_empty() {
                r.text(format!(
                    "The catalog has these of the same family: {}; you can ask about them directly.",
                    near.join(", ")
                ));
            }
        }
    }
}

/// Whether a turn states a load (users at once, daily users, requests per second) but
/// no model: the conversation keeps it for the model named next.
pub fn load_without_model(a: &Asked) -> bool {
    !a.has_workload()
        && (a.concurrency.is_some() || a.serving.daily_users.is_some() || a.serving.qps.is_some())
}

/// A load and no model ("客服机器人，日活 2 万"): what was understood, and the model asked
/// for, since memory and speed depend on it.
pub fn ask_model(ctx: &Context<'_>, ans: &mut Answer) {
    let a = ctx.asked;
    let s = &a.serving;
    let mut load: Vec<String> = Vec::new();
    if let Some(d) = s.daily_users {
        let share = s.peak_share_or_default();
        load.push(match ctx.lang {
            Lang::Zh => format!(
                "日活 {d}，高峰按 {:.0}% 同时在线约 {:.0} 人",
                share * 100.0,
                d as f64 * share
            ),
            Lang::En => format!(
                "{d} daily users, about {:.0} at once at a {:.0} % peak",
                d as f64 * share,
                share * 100.0
            ),
        });
    }
    if let (Some(n), Some(q)) = (s.daily_requests, s.qps) {
        load.push(match ctx.lang {
            Lang::Zh => format!("每天 {n:.0} 次请求，高峰约每秒 {q:.2} 个"),
            Lang::En => format!("{n:.0} requests a day, about {q:.2} per second at the peak"),
        });
    } else if let Some(q) = s.qps {
        load.push(match ctx.lang {
            Lang::Zh => format!("高峰每秒 {q} 个请求"),
            Lang::En => format!("{q} requests per second at the peak"),
        });
    }
    if let Some(c) = a.concurrency {
        load.push(match ctx.lang {
            Lang::Zh => format!("{c} 路并发"),
            Lang::En => format!("{c} requests at once"),
        });
    }
    let r = &mut ans.rendered;
    match ctx.lang {
        Lang::Zh => {
            r.text(format!("**理解的负载**：{}。", load.join("，")));
            r.text("还差模型：要部署哪个模型（例如 Qwen2.5-14B、Llama-3.1-8B），上下文多长？显存和速度都取决于它，告诉我之后按这个负载给出卡、台数和价格。");
        }
        Lang::En => {
            r.text(format!("**Load understood**: {}.", load.join("; ")));
            r.text("Which model will serve it (e.g. Qwen2.5-14B, Llama-3.1-8B), and how long is the context? Memory and speed depend on it; with that I size the cards, replicas and price for this load.");
        }
    }
}

/// A size was given with an unknown name: the answer is for a generic model of that
/// size (DOMAIN.md §6), and says so.
pub fn generic_note(name: &str, w: &Workload, lang: Lang) -> String {
    let name = shown(name);
    let size = params(w.arch.params_b);
    match lang {
        Lang::Zh => format!(
            "注意：目录里没有「{name}」，下面按一个通用的 {size} 稠密模型（Llama 结构、GQA）估算；它若是 MoE、滑动窗口或原生 FP8/FP4 权重，实际显存会不同，请告诉我。"
        ),
        Lang::En => format!(
            "Note: \"{name}\" is not in my catalog; the figures below are for a generic {size} dense model (Llama-shaped, GQA). If it is a MoE, uses sliding windows or ships FP8/FP4 weights, the real need differs: tell me."
        ),
    }
}
