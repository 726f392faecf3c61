//! The serving block (CONTRACT.md §2.1, DOMAIN.md §8): how the named configuration, else
//! the recommended one, serves the workload — KV capacity, concurrency, speed, TTFT and
//! the replicas the asked load needs, priced in total — with the assumptions stated and
//! the engine settings that matter.

use super::context::Context;
use crate::advisor::catalog::{Gpu, Model, Offer, Unit};
use crate::advisor::contract::{Answer, ServingJson};
use crate::advisor::estimate::serving::LoadFrom;
use crate::advisor::estimate::{self, Serving};
use crate::advisor::parse::Lang;
use crate::advisor::recommend::{self, Candidate, Limits, TIGHT};
use crate::advisor::reply::{money, t};
use crate::advisor::workload::{Engine, Precision, ServingAsk, Workload};
use std::fmt::Write;

/// The configuration the figures are for: a card, how many the model is split over,
/// whether they are NVLinked, the precision, and the offer that prices it.
struct Config<'c> {
    gpu: &'c Gpu,
    /// Cards one copy is split over: the named count, else chosen by `best_split`.
    tp: Option<u32>,
    memory: f64,
    linked: bool,
    precision: Precision,
    offer: Option<&'c Offer>,
    /// Cards the priced configuration has (a whole machine may hold several copies).
    cards: u32,
}

/// The split of `cards` cards (a power of two dividing them) that serves best, with its
/// figures: with no load, the fewest cards that hold one request as the engine places
/// memory; with a load, the split whose copies on these cards carry the most of it
/// (fewest configurations needed) within the latency targets, the narrower on a tie; a
/// split within one machine (`machine` cards) before one across machines, which needs the
/// inter-node network (DOMAIN.md §6).
#[allow(clippy::too_many_arguments)]
fn best_split(
    w: &Workload,
    model: Option<&Model>,
    s: &ServingAsk,
    p: Precision,
    gpu: &Gpu,
    memory: f64,
    cards: u32,
    machine: u32,
    linked: bool,
) -> Option<(u32, Serving)> {
    let mut one = w.clone();
    one.concurrency = 1;
    one.precision = p;
    let bill = estimate::bill(&one, p);
    let mut wp = w.clone();
    wp.precision = p;
    let load = w.concurrency > 1;
    let mut best: Option<(u32, (bool, bool, u32), Serving)> = None;
    let mut tp = 1;
    while tp <= cards.max(1) {
        if cards % tp == 0 && bill.per_card(tp) <= TIGHT * memory {
            let sv = estimate::serving(&wp, model, s, p, gpu, tp, linked);
            if sv.kv_capacity_tokens >= (sv.input_tokens + sv.output_tokens) as f64 {
                let configs = sv.replicas.div_ceil((cards / tp).max(1)).max(1);
                if !load {
                    return Some((tp, sv));
                }
                // A split that meets the latency targets before one that misses one.
                let key = (tp > machine, sv.missed.any(), configs);
                if best.as_ref().is_none_or(|(_, k, _)| key < *k) {
                    best = Some((tp, key, sv));
                }
            }
        }
        tp *= 2;
    }
    best.map(|(tp, _, sv)| (tp, sv))
}

fn config<'c>(ctx: &Context<'c>, w: &Workload, ans: &Answer) -> Option<Config<'c>> {
    let cat = ctx.cat;
    let a = ctx.asked;
    // The named card and count, while they hold the weights; a card named in the plural
    // without a count ("on H100s") as few of it as hold them, up to one machine of 8;
    // else the recommended one.
    let weights = estimate::bill(w, w.precision).weights;
    let count_of = |gpu: &Gpu| match a.gpu_count {
        Some(n) => n.clamp(1, 64),
        None if a.cards_plural => [1, 2, 4, 8]
            .into_iter()
            .find(|n| weights / f64::from(*n) <= TIGHT * gpu.memory_gb)
            .unwrap_or(1),
        None => 1,
    };
    let holds = |gpu: &Gpu| {
        weights / f64::from(count_of(gpu)) <= TIGHT * gpu.memory_gb || ans.recommendation.is_none()
    };
    if let Some(gpu) = a
        .gpu
        .as_deref()
        .and_then(|g| cat.gpu(g))
        .filter(|g| holds(g))
    {
        let offer = cat
            .offers
            .iter()
            .find(|o| o.gpu == gpu.id && o.slice_memory_gb.is_none());
        let count = count_of(gpu);
        let linked = offer.map_or(!gpu.link.is_empty(), |o| !o.link.is_empty());
        return Some(Config {
            gpu,
            tp: Some(count),
            memory: gpu.memory_gb,
            linked,
            precision: w.precision,
            offer,
            cards: count,
        });
    }
    let rec = ans.recommendation.as_ref()?;
    let offer = cat.offers.iter().find(|o| o.id == rec.offer)?;
    let gpu = cat.gpu(&offer.gpu)?;
    let precision = Precision::from_id(rec.precision).unwrap_or(w.precision);
    let cards = rec.count * offer.cards_per_unit;
    let memory = offer.slice_memory_gb.unwrap_or(gpu.memory_gb);
    Some(Config {
        gpu,
        tp: None,
        memory,
        linked: !offer.link.is_empty(),
        precision,
        offer: Some(offer),
        cards,
    })
}

/// The serving figures of an answer: the configuration, the cards one copy is split
/// over, and the estimate.
pub struct Served<'c> {
    c: Config<'c>,
    tp: u32,
    s: Serving,
}

impl Served<'_> {
    /// Single-stream decode tokens/s of the served configuration.
    pub fn decode_tokens_per_s(&self) -> f64 {
        self.s.decode_tokens_per_s
    }

    /// Whether these figures are for the recommended candidate `c` split over `split`
    /// cards: the same card and precision, and either the recommended configuration
    /// itself (its cards hold copies of the split the figures are for) or the named cards
    /// it is split over.
    pub fn describes(&self, c: &Candidate<'_>, split: u32) -> bool {
        self.c.gpu.id == c.gpu.id
            && self.c.precision == c.precision
            && (self.c.tp.is_none() || self.tp == split || self.c.cards == c.cards)
    }
}

/// The serving figures for an inference workload on its configuration (the named one,
/// else the recommended one); `None` for training, diffusion or no configuration.
pub fn compute<'c>(ctx: &Context<'c>, w: &Workload, ans: &Answer) -> Option<Served<'c>> {
    if w.task.is_training() || w.arch.diffusion {
        return None;
    }
    let c = config(ctx, w, ans)?;
    let model = w.model.as_deref().and_then(|m| ctx.cat.model(m));
    let sa = &ctx.asked.serving;
    let mut wp = w.clone();
    wp.precision = c.precision;
    let sliced = (c.memory < c.gpu.memory_gb).then(|| slice_of(c.gpu, c.memory));
    let gpu = sliced.as_ref().unwrap_or(c.gpu);
    let fixed = |tp: u32| {
        (
            tp,
            estimate::serving(&wp, model, sa, c.precision, gpu, tp, c.linked),
        )
    };
    let (tp, s) = match c.tp {
        Some(tp) => fixed(tp),
        None => {
            let machine = c.offer.map_or(c.cards, machine_cards);
            best_split(
                w,
                model,
                sa,
                c.precision,
                gpu,
                c.memory,
                c.cards,
                machine,
                c.linked,
            )
            .unwrap_or_else(|| fixed(c.cards.max(1)))
        }
    };
    Some(Served { c, tp, s })
}

/// The most cards of an offer in one machine: a machine's cards, or the largest count of
/// single cards one server takes (catalog `counts`).
fn machine_cards(o: &Offer) -> u32 {
    match o.unit {
        Unit::Machine => o.cards_per_unit,
        _ => o.counts.iter().max().copied().unwrap_or(1) * o.cards_per_unit,
    }
}

/// A slice of a card as the engine sees it: its share of the memory (CUDA context
/// included, DOMAIN.md §6) and the same share of the bandwidth and compute, as a card
/// shared by as many tenants as it has slices gives each (NVIDIA's MIG user guide: an
/// instance gets its fraction of the memory, bandwidth and SMs together).
fn slice_of(gpu: &Gpu, memory_gb: f64) -> Gpu {
    let share = memory_gb / gpu.memory_gb;
    Gpu {
        memory_gb,
        visible_mib: None,
        bandwidth_gbs: gpu.bandwidth_gbs * share,
        fp16_tflops: gpu.fp16_tflops * share,
        fp8_tflops: gpu.fp8_tflops * share,
        int8_tops: gpu.int8_tops * share,
        ..gpu.clone()
    }
}

/// Adds the serving object and block; the serving estimate's single-stream speed becomes
/// the answer's one speed figure.
pub fn render(ctx: &Context<'_>, served: &Served<'_>, ans: &mut Answer) {
    let s = &served.s;
    if let Some(e) = ans.estimate.as_mut() {
        e.decode_tokens_per_s = Some(crate::advisor::contract::round1(s.decode_tokens_per_s));
    }
    ans.serving = Some(ServingJson::from_serving(s, &served.c.gpu.id));
    let lines = block(ctx, &served.c, served.tp, s, ctx.lang);
    ans.rendered.text(lines.0);
    ans.rendered.bullets(lines.1);
}

/// Adds the serving object and block for an inference workload on its configuration.
pub fn attach(ctx: &Context<'_>, w: &Workload, ans: &mut Answer) {
    if let Some(served) = compute(ctx, w, ans) {
        render(ctx, &served, ans);
    }
}

/// Requests at once as a reader counts them: whole requests from ten up, tenths below
/// (vLLM's "1.56x" reads as 1.5), never rounded up past what fits.
fn requests(v: f64) -> String {
    let tenths = (v * 10.0).floor();
    if v >= 10.0 || tenths % 10.0 == 0.0 {
        num(v.floor())
    } else {
        format!("{:.1}", tenths / 10.0)
    }
}

/// A time: milliseconds under a second, seconds with two decimals above.
fn seconds(v: f64, lang: Lang) -> String {
    if v < 1.0 {
        format!("{:.0}{}", v * 1000.0, t(lang, " 毫秒", " ms"))
    } else {
        format!("{:.2}{}", v, t(lang, " 秒", " s"))
    }
}

fn num(v: f64) -> String {
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The block: a heading line with the configuration and request, then bullets for the
/// capacity, the speed, the load, the assumptions and the engine settings.
fn block(
    ctx: &Context<'_>,
    c: &Config<'_>,
    tp: u32,
    s: &Serving,
    lang: Lang,
) -> (String, Vec<String>) {
    let a = &ctx.asked.serving;
    let head = format!(
        "{}{}{}{} × {}{}{}{}{}{}",
        t(lang, "**服务能力**（", "**Serving** ("),
        s.engine.label(),
        t(lang, "，", ", "),
        s.cards,
        c.gpu.name,
        t(lang, "，每个请求输入 ", "; each request "),
        s.input_tokens,
        t(lang, " + 输出 ", " in + "),
        s.output_tokens,
        t(lang, " token）", " out tokens)"),
    );
    let mut b = Vec::new();
    if !s.holds_one_request() {
        b.push(
            t(
                lang,
                "放下权重和引擎预留后，KV cache 已放不下一个这样的请求：需要更多卡或更低精度",
                "once the weights and the engine's reserves are placed, the KV cache cannot hold one such request: more cards or a lower precision",
            )
            .to_string(),
        );
    } else {
        b.push(format!(
            "{}{}{}{}{}{}{}",
            t(lang, "KV cache 可放 ", "KV cache holds "),
            num(s.kv_capacity_tokens),
            t(lang, " token，最多同时 ", " tokens: at most "),
            requests(s.max_concurrency),
            t(
                lang,
                " 个这样的请求；单个请求最长 ",
                " such requests at once; the longest single request "
            ),
            num(s.max_context_tokens),
            t(lang, " token", " tokens"),
        ));
        if let Some(v1) = s.v1_capacity_tokens {
            b.push(format!(
                "{}{}{}{}{}",
                t(
                    lang,
                    "这是 vLLM 两代引擎都放得下的数：0.8 以前的 V0 引擎按整段 ",
                    "that is what both vLLM engines hold: V0 (before 0.8) profiles a whole batch of "
                ),
                num(s.max_model_len as f64),
                t(
                    lang,
                    " token 做显存分析；0.8 及以后的 V1 引擎可放 ",
                    " tokens; V1 (0.8 and later) holds "
                ),
                num(v1),
                t(lang, " token", " tokens"),
            ));
        }
    }
    b.push(format!(
        "{}{:.0}{}{}",
        t(lang, "单路生成约 ", "one stream decodes about "),
        s.decode_tokens_per_s,
        t(
            lang,
            " tokens/s，空载首字约 ",
            " tokens/s; time to first token when idle about "
        ),
        seconds(s.ttft_idle_s, lang),
    ));
    let mut load = format!(
        "{}{}{}{:.0}{}{}{}{:.0}{}",
        t(lang, "按 ", "with "),
        num(s.concurrency),
        if s.concurrency == 1.0 {
            t(lang, " 路并发：每路约 ", " request at a time: about ")
        } else {
            t(lang, " 路并发：每路约 ", " requests at once: each about ")
        },
        s.per_user_tokens_per_s,
        t(lang, " tokens/s，首字约 ", " tokens/s, first token about "),
        seconds(s.ttft_s, lang),
        t(lang, "，总输出吞吐约 ", ", total output about "),
        s.throughput_tokens_per_s,
        " tokens/s",
    );
    if s.replicas > 1 {
        let _ = write!(
            load,
            "{}{}{}",
            t(lang, "；需要 ", "; needs "),
            s.replicas,
            t(lang, " 份这样的配置", " copies of this configuration"),
        );
        if let Some(o) = c.offer {
            let units = units_for(o, s.replicas * tp, c.cards);
            let total = o.price.scale(units as f64);
            let _ = write!(
                load,
                "{}{}{}",
                t(lang, "，月费合计约 ", ", about "),
                money(total.mid()),
                t(lang, "/月", " a month in total"),
            );
        }
    }
    b.push(load);
    b.push(assumptions(s, lang));
    b.push(settings(s, tp, lang, a.gguf_bits));
    (head, b)
}

/// Units of an offer that hold `cards` cards (machines hold `cards_per_unit` each; a
/// configuration of `min_cards` is the least).
fn units_for(o: &Offer, cards: u32, min_cards: u32) -> u32 {
    let cards = cards.max(min_cards);
    match o.unit {
        Unit::Machine => cards.div_ceil(o.cards_per_unit.max(1)),
        _ => cards,
    }
}

fn assumptions(s: &Serving, lang: Lang) -> String {
    let mut out = format!(
        "{}{:.1}{}{:.0}{}",
        t(lang, "假设：首字 ≤ ", "assumed: first token ≤ "),
        s.ttft_target_s,
        t(lang, " 秒、每路 ≥ ", " s and ≥ "),
        s.speed_target,
        t(lang, " tokens/s", " tokens/s per user"),
    );
    match s.load_from {
        LoadFrom::DailyUsers => {
            let share = format!("{}", (s.peak_share * 1000.0).round() / 10.0);
            let _ = write!(
                out,
                "{}{share}{}",
                t(lang, "；日活按 ", "; daily users taken as "),
                t(lang, "% 同时在线折算并发", " % at once at the peak"),
            );
        }
        LoadFrom::Qps => {
            if let (Some(n), Some(q)) = (s.daily_requests, s.qps) {
                let _ = match (lang, s.active_hours) {
                    (Lang::Zh, Some(h)) => {
                        write!(out, "；每天 {n:.0} 次请求按均匀落在 {h:.0} 小时里算，高峰约 {q:.2} QPS")
                    }
                    (Lang::Zh, None) => write!(
                        out,
                        "；每天 {n:.0} 次请求按二八原则（八成请求落在两成时间里）算，高峰约 {q:.2} QPS"
                    ),
                    (Lang::En, Some(h)) => write!(
                        out,
                        "; {n:.0} requests a day taken as spread evenly over {h:.0} hours, a peak of about {q:.2} QPS"
                    ),
                    (Lang::En, None) => write!(
                        out,
                        "; {n:.0} requests a day taken by the 80/20 rule (80 % of them in 20 % of the day), a peak of about {q:.2} QPS"
                    ),
                };
            }
            out.push_str(t(
                lang,
                "；QPS 按 Little 定律（QPS × 每个请求在目标速度下的时长）折算并发",
                "; QPS turned into concurrency by Little's law (QPS × a request's time at the targets)",
            ))
        }
        LoadFrom::None => out.push_str(t(
            lang,
            "；没说负载，按目标内能承载的最大并发算",
            "; no load given: the most the targets allow",
        )),
        LoadFrom::Concurrency => {}
    }
    // Targets matter only where one request fits at all.
    if s.holds_one_request() && s.missed.ttft {
        let parts = [
            t(lang, "。首字 ≤ ", ". A first token within "),
            t(
                lang,
                " 秒在这个配置上做不到：单个请求空载首字就要约 ",
                " s cannot be met on this configuration: one request on an idle copy already takes about ",
            ),
            t(
                lang,
                "，加副本也不会变快，并发只按每路速度估；缩短提示词、换算力更强的卡或用 NVLink 互联的机器才能降首字",
                ", and more copies do not make it faster, so the load is sized by the speed per user alone; shorter prompts, a card with more compute or NVLink-connected cards lower it",
            ),
        ];
        let target = format!("{:.1}", s.ttft_target_s);
        unmet(&mut out, parts, &target, &seconds(s.ttft_idle_s, lang));
    }
    if s.holds_one_request() && s.missed.speed {
        let parts = [
            t(lang, "。每路 ≥ ", ". At least "),
            t(
                lang,
                " tokens/s 在这个配置上做不到：单路只有约 ",
                " tokens/s per user cannot be met on this configuration: one stream alone decodes about ",
            ),
            t(
                lang,
                " tokens/s，加副本也不会变快，并发只按首字目标估；带宽更高的卡、更低精度或把模型切到更多卡上才能提速",
                " tokens/s, and more copies do not make it faster, so the load is sized by the first-token target alone; a card with more bandwidth, a lower precision or more cards per copy make it faster",
            ),
        ];
        let target = format!("{:.0}", s.speed_target);
        unmet(
            &mut out,
            parts,
            &target,
            &format!("{:.0}", s.decode_tokens_per_s),
        );
    }
    out.push_str(t(
        lang,
        "。请求长度、引擎或目标不同，告诉我即可重算",
        ". Tell me your request size, engine or targets to recompute",
    ));
    out
}

/// A target one request misses, as "<head><target><why><what one request gets><way out>".
fn unmet(out: &mut String, [head, why, way_out]: [&str; 3], target: &str, alone: &str) {
    for part in [head, target, why, alone, way_out] {
        out.push_str(part);
    }
}

fn settings(s: &Serving, tp: u32, lang: Lang, gguf: Option<f64>) -> String {
    // The batch the targets allow on one copy (`--max-num-seqs` keeps latency there).
    let seqs = (s.concurrency / s.replicas.max(1) as f64)
        .ceil()
        .min(s.max_concurrency.floor())
        .max(1.0) as u64;
    let len = s.max_model_len;
    let flags = match s.engine {
        Engine::Vllm => format!(
            "`--gpu-memory-utilization 0.90 --max-model-len {len} --max-num-seqs {seqs} --tensor-parallel-size {}`",
            tp
        ),
        Engine::Sglang => format!(
            "`--mem-fraction-static --context-length {len} --max-running-requests {seqs} --tp {}`",
            tp
        ),
        Engine::TrtLlm => format!(
            "`--max_batch_size {seqs} --max_num_tokens 8192 --kv_cache_free_gpu_mem_fraction 0.9 --tp_size {}`",
            tp
        ),
        Engine::Transformers => t(
            lang,
            "transformers 没有分页 KV 和连续批处理，多用户服务建议换 vLLM/SGLang",
            "transformers has no paged KV cache or continuous batching: serve users with vLLM/SGLang",
        )
        .to_string(),
        Engine::LlamaCpp => format!("`-c {len} -ngl 99 --parallel {}`", seqs.min(4)),
        Engine::Ollama => format!("`num_ctx {len}`, `OLLAMA_NUM_PARALLEL={}`", seqs.min(4)),
    };
    let mut out = format!("{}{}", t(lang, "引擎参数：", "engine settings: "), flags);
    if let Some(bits) = gguf {
        let _ = write!(
            out,
            "{}{bits:.1}{}",
            t(lang, "（GGUF 每权重约 ", " (GGUF at about "),
            t(lang, " bit）", " bits per weight)"),
        );
    }
    out
}

/// For a load of many users (and no named card), the configuration whose copies carry
/// it within the latency targets for the least money in total: every configuration
/// that holds the model with one request is sized by the serving model (its KV capacity
/// and speed under load), then priced for as many copies as the load needs. The
/// returned candidate counts all of them. Otherwise `best` as it is.
pub fn load_pick<'c>(
    ctx: &Context<'c>,
    w: &Workload,
    named: bool,
    best: Option<Candidate<'c>>,
) -> Option<Candidate<'c>> {
    if named || w.task.is_training() || w.arch.diffusion || w.concurrency <= 1 {
        return best;
    }
    let cat = ctx.cat;
    let s = &ctx.asked.serving;
    let model = w.model.as_deref().and_then(|m| cat.model(m));
    let mut one = w.clone();
    one.concurrency = 1;
    let p = best.as_ref().map_or(w.precision, |b| b.precision);
    // The card asked for, unless the recommendation had to leave it (a card the customer
    // has that cannot hold the model): then every card, as the recommendation searched.
    let limits = Limits {
        gpu: ctx
            .asked
            .gpu
            .clone()
            .filter(|g| best.as_ref().is_none_or(|b| b.gpu.id == *g)),
        count: None,
        ..ctx.limits.clone()
    };
    let hpm = cat.billing.hours_per_month;
    let mut pick: Option<(bool, f64, u32, Candidate<'c>)> = None;
    for c in recommend::candidates(cat, &one, &limits, &|_| Some(p)) {
        if !c.fits_headroom() {
            continue;
        }
        let Some((_, sv)) = best_split(
            w,
            model,
            s,
            c.precision,
            c.gpu,
            c.card_memory_gb,
            c.cards,
            machine_cards(c.offer),
            !c.offer.link.is_empty(),
        ) else {
            continue;
        };
        let tp = sv.cards;
        let copies = (c.cards / tp).max(1);
        let configs = sv.replicas.div_ceil(copies).max(1);
        let units = configs * c.units;
        let cost = c.cost(hpm) * configs as f64;
        if ctx
            .asked
            .budget_cny
            .is_some_and(|b| c.monthly().max * configs as f64 > b + 1e-9)
        {
            continue;
        }
        // A configuration that meets the latency targets comes before any that misses
        // one, whatever the price: copies cannot make up for a missed target.
        let missed = sv.missed.any();
        let better = match &pick {
            None => true,
            Some((pm, pc, pcards, _)) => {
                (!missed && *pm)
                    || (missed == *pm
                        && (cost < pc - 1e-6
                            || ((cost - pc).abs() <= 1e-6
                                && units * c.offer.cards_per_unit < *pcards)))
            }
        };
        if better {
            if let Some(mut total) = recommend::candidate(cat, c.offer, units, &one, c.precision) {
                // The configurations are copies: each card holds what one copy's split puts
                // on it, and a request runs at that split's speed.
                total.per_card_gb = c.bill.per_card(tp);
                total.decode_tokens_per_s = Some(sv.decode_tokens_per_s);
                pick = Some((missed, cost, units * c.offer.cards_per_unit, total));
            }
        }
    }
    pick.map(|(_, _, _, c)| c).or(best)
}
