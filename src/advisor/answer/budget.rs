//! Budget answers: what a monthly budget buys (DOMAIN.md §6) and, per workload class,
//! the cheapest configuration within it.

use super::context::Context;
use crate::advisor::contract::{Answer, ConfigJson};
use crate::advisor::parse::Lang;
use crate::advisor::recommend::{self, Limits};
use crate::advisor::reply::{money, money_range, t};
use crate::advisor::workload::{Asked, Task, Workload};

/// The workload classes a budget answer lists: (size in B, task).
const CLASSES: &[(f64, Task)] = &[
    (7.0, Task::Inference),
    (14.0, Task::Inference),
    (70.0, Task::Inference),
    (7.0, Task::Lora),
    (14.0, Task::Lora),
];

pub fn budget(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let cat = ctx.cat;
    let Some(b) = ctx.asked.budget_cny else {
        ans.rendered.text(t(
            lang,
            "请告诉我每月预算，例如「预算 3000 能干嘛」。",
            "Tell me your monthly budget, e.g. \"budget 3000 yuan a month\".",
        ));
        return;
    };
    // "一年最多 30 万，A100 能租几张": the named card's count within the budget, else the
    // most memory the budget buys.
    let named = ctx
        .asked
        .gpu
        .as_deref()
        .and_then(|g| recommend::budget_pick(cat, b, ctx.asked.domestic, Some(g)));
    let pick = named.or_else(|| recommend::budget_pick(cat, b, ctx.asked.domestic, None));
    let r = &mut ans.rendered;
    match pick {
        Some((o, g, units)) => {
            let cards = units * o.cards_per_unit;
            let mem = o.slice_memory_gb.unwrap_or(g.memory_gb);
            let monthly = o.price.scale(units as f64);
            r.text(match lang {
                Lang::Zh => format!(
                    "**预算 {}/月**：{} {} × {}（每卡 {:.0} GB，共 {:.0} GB），{}/月{}。",
                    money(b), if named.is_some() { "最多能租" } else { "显存最大的配置是" }, units, o.name_zh, mem, mem * cards as f64, money_range(monthly),
                    if o.annual_discount > 0.0 { format!("，年付 {}/月", money_range(monthly.scale(1.0 - o.annual_discount))) } else { String::new() }
                ),
                Lang::En => format!(
                    "**Budget {}/month**: {} {} × {} ({:.0} GB each, {:.0} GB in all) at {}/month{}.",
                    money(b), if named.is_some() { "it rents at most" } else { "the most memory per card is" }, units, o.name_en, mem, mem * cards as f64, money_range(monthly),
                    if o.annual_discount > 0.0 { format!(", {}/month paid annually", money_range(monthly.scale(1.0 - o.annual_discount))) } else { String::new() }
                ),
            });
            ans.recommendation = Some(ConfigJson::priced(o, g, units));
        }
        None => {
            // The cheapest offer, by its lowest price, from the catalog.
            let cheapest = cat
                .offers
                .iter()
                .min_by(|x, y| x.price.min.total_cmp(&y.price.min));
            let (name, price) = cheapest.map_or((String::new(), String::new()), |o| {
                (
                    t(lang, &o.name_zh, &o.name_en).to_string(),
                    money_range(o.price),
                )
            });
            r.text(match lang {
                Lang::Zh => format!("**预算 {}/月**：低于目录里最便宜的配置（{name}，{price}/月）。", money(b)),
                Lang::En => format!(
                    "**Budget {}/month**: below the cheapest configuration in the catalog ({name}, {price}/month).",
                    money(b)
                ),
            })
        }
    }
    let limits = Limits {
        domestic: ctx.asked.domestic,
        budget: Some(b),
        exclude: ctx.asked.declined.clone(),
        whole_cards: ctx.asked.whole_cards,
        ..Limits::default()
    };
    let mut lines = Vec::new();
    for &(size, task) in CLASSES {
        let asked = Asked {
            size_b: Some(size),
            task: Some(task),
            ..Asked::default()
        };
        let Some(w) = Workload::resolve(&asked, cat) else {
            continue;
        };
        let plan = recommend::plan(cat, &w, &limits);
        let label = format!("{size:.0}B {}", super::describe::task_name(task, lang));
        lines.push(match plan.best {
            Some(c) => format!(
                "{label}：{} × {}，{}，{}/{}",
                c.units,
                t(lang, &c.offer.name_zh, &c.offer.name_en),
                c.precision.label(),
                money_range(c.monthly()),
                t(lang, "月", "month")
            ),
            None => format!(
                "{label}：{}",
                t(lang, "不在预算内", "not within this budget")
            ),
        });
    }
    ans.rendered
        .text(t(lang, "**这个预算能做什么**", "**What this budget buys**"));
    ans.rendered.bullets(lines);
    if let Some(tp) = cat.topic("pitfall-unit-price-only") {
        ans.rendered
            .text(format!("**{}**", t(lang, &tp.title_zh, &tp.title_en)));
        ans.topics.push(tp.id.clone());
    }
}
