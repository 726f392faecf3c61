//! Price answers: what offers cost (list, annual, add-ons, multi-card and yearly totals),
//! straight from the catalog; and the quote of the configuration a conversation's workload
//! needs, which takes that configuration from the recommendation.

use super::context::Context;
use super::describe::period_total;
use super::topics::add_topic;
use crate::advisor::catalog::{Addon, Offer, Unit, ANNUAL_MONTHS};
use crate::advisor::contract::{Answer, ConfigJson};
use crate::advisor::lexicon::Cue;
use crate::advisor::parse::{Lang, Parsed};
use crate::advisor::reply::{money, money_range, period, t};
use crate::advisor::workload::{Asked, Workload};

/// The whole machine asked for, and not turned down ("single card, not the whole node").
fn machine_asked(p: &Parsed) -> bool {
    p.cue(Cue::Machine) && !p.cue(Cue::MachineDeclined)
}

/// The offers a price question is about: the named card's offers, narrowed by the
/// machine / hourly / slice cues when given (and without the machine when turned down).
fn offers_for<'c>(ctx: &Context<'c>, gpu: &str) -> Vec<&'c Offer> {
    let p = ctx.parsed;
    let all: Vec<&Offer> = ctx.cat.offers.iter().filter(|o| o.gpu == gpu).collect();
    let narrowed: Vec<&Offer> = all
        .iter()
        .copied()
        .filter(|o| {
            (!machine_asked(p) || o.unit == Unit::Machine)
                && !(p.cue(Cue::MachineDeclined) && o.unit == Unit::Machine)
                && (!p.cue(Cue::Hourly) || o.hourly)
                && (!p.cue(Cue::Slice) || o.unit == Unit::Slice)
        })
        .collect();
    let narrowed = if narrowed.is_empty() { all } else { narrowed };
    // Slices are a different product: only when asked for, or when nothing else rents.
    let whole: Vec<&Offer> = narrowed
        .iter()
        .copied()
        .filter(|o| o.unit != Unit::Slice || p.cue(Cue::Slice))
        .collect();
    if whole.is_empty() {
        narrowed
    } else {
        whole
    }
}

fn unit_word(o: &Offer, lang: Lang) -> &'static str {
    match o.unit {
        Unit::Card => t(lang, "卡", "card"),
        Unit::Machine => t(lang, "台", "machine"),
        Unit::Slice => t(lang, "个", "slice"),
    }
}

/// "就按这个配，月付多少", "go with your pick. how much for 2 months?", "换 H100 整机，租三个
/// 月多少钱" after a workload: the configuration that runs it (on the card named, when one
/// is), priced for the period asked, ahead of the recommendation's reasons.
pub fn quote(ctx: &Context<'_>, w: &Workload, ans: &mut Answer) {
    super::recommendation::workload_answer(ctx, w, ans, None);
    let Some(c) = ans.recommendation.as_ref() else {
        // Nothing fits: the recommendation's reply says so and what would.
        return;
    };
    let Some(o) = ctx.cat.offers.iter().find(|o| o.id == c.offer) else {
        return;
    };
    let lang = ctx.lang;
    let a = ctx.asked;
    let unit = unit_word(o, lang);
    let units = c.count;
    let months = rental_months(a);
    let mut lines = vec![format!(
        "{}{}{}",
        t(lang, "月付 ", "Monthly "),
        money_range(c.monthly_cny),
        estimate_note(o, lang)
    )];
    if o.annual_discount > 0.0 {
        lines.push(format!(
            "{}{:.0}%{}{}",
            t(lang, "年付优惠 ", "Annual: "),
            o.annual_discount * 100.0,
            t(lang, "，折后每月 ", " off, a month "),
            money_range(c.annual_monthly_cny),
        ));
    }
    if let Some(m) = months {
        lines.push(period_total(o, units, m, lang));
    }
    let mut quote = crate::advisor::reply::Reply::new(lang);
    quote.title(match lang {
        Lang::Zh => format!("报价：{} × {units} {unit}", o.name_zh),
        Lang::En => format!("Quote: {} × {units} {unit}(s)", o.name_en),
    });
    quote.bullets(lines);
    ans.rendered.blocks.splice(0..0, quote.blocks);
}

/// The rental period a price is asked for: "年付多少" asks for the yearly price, at least
/// twelve months.
fn rental_months(a: &Asked) -> Option<f64> {
    if a.annual {
        Some(a.months.unwrap_or(ANNUAL_MONTHS).max(ANNUAL_MONTHS))
    } else {
        a.months
    }
}

/// The note after an estimated price.
fn estimate_note(o: &Offer, lang: Lang) -> &'static str {
    if o.estimated {
        t(
            lang,
            "（估算价，以报价为准）",
            " (estimate: ask sales for a quote)",
        )
    } else {
        ""
    }
}

pub fn price(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let a: &Asked = ctx.asked;
    let mut offers: Vec<&Offer> = Vec::new();
    for g in &a.gpus {
        offers.extend(offers_for(ctx, g));
    }
    if offers.is_empty()
        && (ctx.parsed.cue(Cue::Slice) || ctx.parsed.cue(Cue::Hourly) || machine_asked(ctx.parsed))
    {
        offers = ctx
            .cat
            .offers
            .iter()
            .filter(|o| {
                (ctx.parsed.cue(Cue::Slice) && o.unit == Unit::Slice)
                    || (ctx.parsed.cue(Cue::Hourly) && o.hourly)
                    || (machine_asked(ctx.parsed) && o.unit == Unit::Machine)
            })
            .collect();
    }
    if offers.is_empty() && ctx.parsed.cue(Cue::CpuServer) {
        cpu_servers(ctx, ans);
        return;
    }
    if offers.is_empty() {
        if let Some(g) = a.gpu.as_deref().and_then(|g| ctx.cat.gpu(g)) {
            ans.rendered.text(match lang {
                Lang::Zh => format!("{} 目前不在我们的租用目录里。可选的卡和价格：", g.name),
                Lang::En => format!("The {} is not in our rental catalog. What we rent:", g.name),
            });
        }
        price_table(ctx, ans);
        return;
    }
    let months = rental_months(a);
    for o in offers.iter().take(3) {
        let units = a
            .gpu_count
            .map(|c| (c / o.cards_per_unit).max(1))
            .filter(|u| o.counts.contains(u))
            .unwrap_or(1);
        let unit = unit_word(o, lang);
        let r = &mut ans.rendered;
        r.title(t(lang, &o.name_zh, &o.name_en));
        let mut lines = vec![format!(
            "{}{}/{}{}{}",
            t(lang, "月付 ", "Monthly "),
            money_range(o.price),
            unit,
            t(lang, "/月", "/month"),
            estimate_note(o, lang)
        )];
        if o.hourly {
            let per_hour = o.price.scale(1.0 / ctx.cat.billing.hours_per_month);
            lines.push(format!(
                "{}{}{}",
                t(lang, "按小时折算约 ", "about "),
                money_range(per_hour),
                t(lang, "/小时", "/hour")
            ));
        }
        if o.annual_discount > 0.0 {
            lines.push(format!(
                "{}{:.0}%{}{}/{}{}",
                t(lang, "年付优惠 ", "Annual: "),
                o.annual_discount * 100.0,
                t(lang, "，折后 ", " off, "),
                money_range(o.price.scale(1.0 - o.annual_discount)),
                unit,
                t(lang, "/月", "/month")
            ));
        } else {
            lines.push(
                t(
                    lang,
                    "不参与年付折扣（弹性计费）",
                    "no annual discount (elastic billing)",
                )
                .to_string(),
            );
        }
        if units > 1 || months.is_some() {
            let m = months.unwrap_or(1.0);
            let monthly = o.price.scale(units as f64);
            // The units' monthly bill beside a longer period's total ("4 张 A100 40G 月付总共
            // 多少钱？如果转年付又怎么算？").
            if units > 1 && m > 1.0 {
                lines.push(match lang {
                    Lang::Zh => format!("{units} {unit}月付合计 {}/月", money_range(monthly)),
                    Lang::En => format!(
                        "{units} {unit}(s) paid monthly: {}/month",
                        money_range(monthly)
                    ),
                });
            }
            let (total, disc) = o.period_total(units, m);
            lines.push(match lang {
                Lang::Zh => format!(
                    "{units} {unit} × {}：{}{}",
                    period(m, lang),
                    money_range(total),
                    if disc > 0.0 {
                        format!(
                            "（年付价，合 {}/月；原价 {}）",
                            money_range(monthly.scale(1.0 - disc)),
                            money_range(monthly.scale(m))
                        )
                    } else {
                        String::new()
                    }
                ),
                Lang::En => format!(
                    "{units} {unit}(s) × {}: {}{}",
                    period(m, lang),
                    money_range(total),
                    if disc > 0.0 {
                        format!(
                            " (annual price, {}/month; list {})",
                            money_range(monthly.scale(1.0 - disc)),
                            money_range(monthly.scale(m))
                        )
                    } else {
                        String::new()
                    }
                ),
            });
        }
        // The add-ons asked for, priced in: the units' price plus theirs (once, for the
        // machine the cards are in), a month.
        let asked: Vec<&Addon> = o
            .addons
            .iter()
            .filter(|x| ctx.parsed.addons.contains(&x.kind.as_str()))
            .collect();
        if !asked.is_empty() {
            let extra: f64 = asked.iter().map(|x| x.price).sum();
            lines.push(format!(
                "{}{}{}{}{}",
                t(lang, "按你要的加配（", "With the add-ons asked for ("),
                addon_list(lang, asked.iter().copied()),
                t(lang, "）：合计 ", "): "),
                money_range(o.price.scale(units as f64).plus(extra)),
                t(lang, "/月", "/month in total")
            ));
        }
        if !o.addons.is_empty() {
            lines.push(format!(
                "{}{}",
                t(lang, "加配：", "Add-ons: "),
                addon_list(lang, o.addons.iter())
            ));
        }
        lines.push(t(lang, &o.notes_zh, &o.notes_en).to_string());
        r.bullets(lines);
        if ans.recommendation.is_none() {
            ans.recommendation = ctx.cat.gpu(&o.gpu).map(|g| ConfigJson::priced(o, g, units));
        }
    }
    let included = match lang {
        Lang::Zh => ctx.cat.billing.included_zh.join("、"),
        Lang::En => ctx.cat.billing.included_en.join(", "),
    };
    ans.rendered
        .text(format!("{}{}", t(lang, "已含：", "Included: "), included));
    // A yearly period, or a question the router sends to billing ("有没有折扣", "hourly
    // for a week"): the billing options beside the prices.
    if months.is_some_and(|m| m >= ANNUAL_MONTHS)
        || a.annual
        || ctx.parsed.topics.iter().any(|t| t == "billing")
    {
        add_topic(ctx, ans, "billing");
    }
    // The question the price came with ("the box only has a 200G data disk - how do I get
    // more space and what does it cost?"): its topic in brief beside the price.
    if let Some(id) = ctx.parsed.topics.iter().find(|t| !ans.topics.contains(t)) {
        add_topic(ctx, ans, id);
    }
}

/// The CPU servers rented beside the GPU machines, in USD as the catalog lists them, with
/// the CNY at the catalog's rate.
fn cpu_servers(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let rate = ctx.cat.billing.usd_cny;
    ans.rendered.title(t(lang, "CPU 服务器", "CPU servers"));
    let lines = ctx
        .cat
        .billing
        .cpu_server
        .iter()
        .map(|c| {
            let cny = money(c.usd_month * rate);
            match lang {
                Lang::Zh => format!(
                    "{}：{}，${:.2}/月（约 {cny}）",
                    c.region_zh, c.spec, c.usd_month
                ),
                Lang::En => format!(
                    "{}: {}, ${:.2}/month (about {cny})",
                    c.region_en, c.spec, c.usd_month
                ),
            }
        })
        .collect();
    ans.rendered.bullets(lines);
    ans.rendered.text(match lang {
        Lang::Zh => format!(
            "适合搭配 GPU 机做数据预处理、下载和存放数据集。以美元计价，人民币按 1 美元 ≈ ¥{rate} 折算，仅供参考。"
        ),
        Lang::En => format!(
            "For preprocessing, downloading and holding datasets beside a GPU machine. Priced in USD; the CNY is at ¥{rate} to the dollar, for reference."
        ),
    });
}

/// The whole price list, when a question names no card.
pub fn price_table(ctx: &Context<'_>, ans: &mut Answer) {
    let lang = ctx.lang;
    let head = match lang {
        Lang::Zh => vec![
            "配置".into(),
            "显存".into(),
            "月付".into(),
            "年付折扣".into(),
        ],
        Lang::En => vec![
            "offer".into(),
            "memory".into(),
            "monthly".into(),
            "annual".into(),
        ],
    };
    let rows = ctx
        .cat
        .offers
        .iter()
        .map(|o| {
            let mem = o
                .slice_memory_gb
                .or_else(|| {
                    ctx.cat
                        .gpu(&o.gpu)
                        .map(|g| g.memory_gb * o.cards_per_unit as f64)
                })
                .unwrap_or(0.0);
            vec![
                t(lang, &o.name_zh, &o.name_en).to_string(),
                format!("{mem:.0} GB"),
                format!(
                    "{}{}",
                    money_range(o.price),
                    if o.estimated {
                        t(lang, "（估）", " (est.)")
                    } else {
                        ""
                    }
                ),
                if o.annual_discount > 0.0 {
                    format!("-{:.0}%", o.annual_discount * 100.0)
                } else {
                    "—".into()
                },
            ]
        })
        .collect();
    ans.rendered.table(head, rows);
}

/// Add-ons with their prices, as one list ("内存升级到 128G +¥600，加 1T 数据盘 +¥300").
fn addon_list<'a>(lang: Lang, addons: impl Iterator<Item = &'a Addon>) -> String {
    addons
        .map(|x| format!("{} +{}", t(lang, &x.name_zh, &x.name_en), money(x.price)))
        .collect::<Vec<_>>()
        .join(t(lang, "，", ", "))
}
