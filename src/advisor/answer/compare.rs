//! Compare answers: how two to four cards differ (memory, bandwidth, compute, FP8,
//! links, price), straight from the catalog, and what that means for choosing.

use super::context::Context;
use super::topics::add_topic;
use crate::advisor::catalog::{Gpu, Range};
use crate::advisor::contract::Answer;
use crate::advisor::parse::Lang;
use crate::advisor::reply::{money_range, t};

/// "2 张 A100 40G 和 4 张 3090，哪个月租便宜": each card at the count said with it, priced
/// a month, the cheaper named.
fn counted_prices(ctx: &Context<'_>, gpus: &[&Gpu], ans: &mut Answer) {
    let lang = ctx.lang;
    let configs: Vec<(&Gpu, u32, Range)> = gpus
        .iter()
        .filter_map(|g| {
            let n = ctx.asked.counted.iter().find(|(id, _)| *id == g.id)?.1;
            let o = ctx.cat.offer_for_gpu(&g.id)?;
            // Cards rented by the machine come in whole machines.
            let units = n.div_ceil(o.cards_per_unit.max(1));
            Some((*g, n, o.price.scale(units as f64)))
        })
        .collect();
    if configs.len() < 2 {
        return;
    }
    let mut lines: Vec<String> = configs
        .iter()
        .map(|(g, n, p)| {
            format!(
                "{n} × {}{}{}{}",
                g.name,
                t(lang, "：", ": "),
                money_range(*p),
                t(lang, "/月", "/month")
            )
        })
        .collect();
    let cheapest = configs
        .iter()
        .min_by(|a, b| a.2.max.total_cmp(&b.2.max))
        .expect("two configurations");
    lines.push(match lang {
        Lang::Zh => format!("按月租算，{} × {} 更便宜（只比价格；能不能跑你的模型要看显存）。", cheapest.1, cheapest.0.name),
        Lang::En => format!(
            "By the month, {} × {} is the cheaper (price only; whether it runs your model is a question of memory).",
            cheapest.1, cheapest.0.name
        ),
    });
    ans.rendered.bullets(lines);
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.1}×", a / b)
}

pub fn compare(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let gpus: Vec<&Gpu> = ctx
        .asked
        .gpus
        .iter()
        .filter_map(|g| ctx.cat.gpu(g))
        .take(4)
        .collect();
    ans.compare = Some(gpus.iter().map(|g| g.id.clone()).collect());
    let mut head = vec![t(lang, "指标", "spec").to_string()];
    head.extend(gpus.iter().map(|g| g.name.clone()));
    let row = |label: &str, f: &dyn Fn(&Gpu) -> String| {
        let mut r = vec![label.to_string()];
        r.extend(gpus.iter().map(|g| f(g)));
        r
    };
    let price = |g: &Gpu| {
        ctx.cat.offer_for_gpu(&g.id).map_or("—".to_string(), |o| {
            let per_card = o.price.scale(1.0 / o.cards_per_unit as f64);
            format!(
                "{}{}",
                money_range(per_card),
                t(lang, "/卡/月", "/card/month")
            )
        })
    };
    let rows = vec![
        row(t(lang, "显存", "memory"), &|g| {
            format!("{:.0} GB {}", g.memory_gb, g.memory_type)
        }),
        row(t(lang, "带宽", "bandwidth"), &|g| {
            format!("{:.0} GB/s", g.bandwidth_gbs)
        }),
        row("FP16/BF16 TFLOPS", &|g| format!("{:.0}", g.fp16_tflops)),
        row("FP8", &|g| {
            if g.fp8() {
                format!("{:.0} TFLOPS", g.fp8_tflops)
            } else {
                t(lang, "不支持", "no").into()
            }
        }),
        // The link of what is rented (DOMAIN.md §6: the consumer cards come over PCIe,
        // whatever bridge the board itself could take).
        row(t(lang, "卡间互联", "link"), &|g| {
            let rented_linked = ctx
                .cat
                .offer_for_gpu(&g.id)
                .is_none_or(|o| !o.link.is_empty());
            if g.link.is_empty() || !rented_linked {
                "PCIe".into()
            } else {
                g.link.clone()
            }
        }),
        row(t(lang, "月租", "price"), &price),
    ];
    ans.rendered.table(head, rows);
    counted_prices(ctx, &gpus, ans);
    if gpus.len() >= 2 {
        let (a, b) = (gpus[0], gpus[1]);
        let (fast, slow) = if a.bandwidth_gbs >= b.bandwidth_gbs {
            (a, b)
        } else {
            (b, a)
        };
        let (strong, weak) = if a.fp16_tflops >= b.fp16_tflops {
            (a, b)
        } else {
            (b, a)
        };
        let mut lines = vec![
            match lang {
                Lang::Zh => format!(
                    "推理单路生成速度看带宽：{} 约为 {} 的 {}。",
                    fast.name,
                    slow.name,
                    ratio(fast.bandwidth_gbs, slow.bandwidth_gbs)
                ),
                Lang::En => format!(
                    "Single-stream decoding follows bandwidth: the {} is {} the {}.",
                    fast.name,
                    ratio(fast.bandwidth_gbs, slow.bandwidth_gbs),
                    slow.name
                ),
            },
            match lang {
                Lang::Zh => format!(
                    "训练算力（BF16 稠密）：{} 约为 {} 的 {}。",
                    strong.name,
                    weak.name,
                    ratio(strong.fp16_tflops, weak.fp16_tflops)
                ),
                Lang::En => format!(
                    "Training compute (dense BF16): the {} is {} the {}.",
                    strong.name,
                    ratio(strong.fp16_tflops, weak.fp16_tflops),
                    weak.name
                ),
            },
        ];
        let bigger = if a.memory_gb >= b.memory_gb { a } else { b };
        lines.push(match lang {
            Lang::Zh => format!("能装多大的模型看显存：{} 有 {:.0} GB。先按显存选，再看带宽和价格。", bigger.name, bigger.memory_gb),
            Lang::En => format!("What fits is set by memory: the {} has {:.0} GB. Choose by memory first, then bandwidth and price.", bigger.name, bigger.memory_gb),
        });
        let multi_train: Vec<&str> = gpus
            .iter()
            .filter(|g| g.bf16 && !g.link.is_empty() && !g.consumer)
            .map(|g| g.name.as_str())
            .collect();
        if !multi_train.is_empty() {
            lines.push(match lang {
                Lang::Zh => format!("多卡训练选有 NVLink/HCCS 的：{}。", multi_train.join("、")),
                Lang::En => format!(
                    "For multi-card training take the one with NVLink/HCCS: {}.",
                    multi_train.join(", ")
                ),
            });
        }
        ans.rendered.bullets(lines);
    }
    // The topic the question itself raises ("换 H100 划不划算" is the upgrade question)
    // comes first, then the comparison's own.
    let asked = ctx.parsed.topics.first();
    if let Some(id) = asked {
        add_topic(ctx, ans, id);
    }
    let own = if gpus.iter().any(|g| g.consumer) && gpus.iter().any(|g| !g.consumer) {
        "consumer-vs-datacenter"
    } else {
        "hbm-bandwidth"
    };
    if asked.is_none_or(|id| id != own) {
        add_topic(ctx, ans, own);
    }
}
