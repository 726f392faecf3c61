//! The serving block (CONTRACT.md §2.1, DOMAIN.md §8): how the named configuration, else
//! the recommended one, serves the workload — KV capacity, concurrency, speed, TTFT and
//! the replicas the asked load needs, priced in total — with the assumptions stated and
//! the engine settings that matter.

use super::context::Context;
use crate::advisor::catalog::{Gpu, Offer, Unit};
use crate::advisor::contract::{Answer, ServingJson};
use crate::advisor::estimate::serving::LoadFrom;
use crate::advisor::estimate::{self, Serving};
use crate::advisor::parse::Lang;
use crate::advisor::recommend::TIGHT;
use crate::advisor::reply::{money, t};
use crate::advisor::workload::{Engine, Precision, Workload};
use std::fmt::Write;

/// The configuration the figures are for: a card, how many the model is split over,
/// whether they are NVLinked, the precision, and the offer that prices it.
struct Config<'c> {
    gpu: &'c Gpu,
    tp: u32,
    linked: bool,
    precision: Precision,
    offer: Option<&'c Offer>,
    /// Cards the priced configuration has (a whole machine may hold several copies).
    cards: u32,
}

/// The fewest cards, in powers of two up to `cards`, whose share of the bill fits.
fn split(w: &Workload, p: Precision, memory: f64, cards: u32) -> u32 {
    let bill = estimate::bill(w, p);
    let mut tp = 1;
    while tp < cards && bill.per_card(tp) > TIGHT * memory {
        tp *= 2;
    }
    tp.min(cards.max(1))
}

fn config<'c>(ctx: &Context<'c>, w: &Workload, ans: &Answer) -> Option<Config<'c>> {
    let cat = ctx.cat;
    let a = ctx.asked;
    if let Some(gpu) = a.gpu.as_deref().and_then(|g| cat.gpu(g)) {
        let offer = cat
            .offers
            .iter()
            .find(|o| o.gpu == gpu.id && o.slice_memory_gb.is_none());
        let count = a.gpu_count.unwrap_or(1).clamp(1, 64);
        let linked = offer.map_or(!gpu.link.is_empty(), |o| !o.link.is_empty());
        return Some(Config {
            gpu,
            tp: count,
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
        tp: split(w, precision, memory, cards),
        linked: !offer.link.is_empty(),
        precision,
        offer: Some(offer),
        cards,
    })
}

/// Adds the serving object and block for an inference workload on its configuration;
/// the estimate's single-stream speed becomes the serving model's.
pub fn attach(ctx: &Context<'_>, w: &Workload, ans: &mut Answer) {
    if w.task.is_training() || w.arch.diffusion {
        return;
    }
    let Some(c) = config(ctx, w, ans) else {
        return;
    };
    let model = w.model.as_deref().and_then(|m| ctx.cat.model(m));
    let mut wp = w.clone();
    wp.precision = c.precision;
    let s = estimate::serving(
        &wp,
        model,
        &ctx.asked.serving,
        c.precision,
        c.gpu,
        c.tp,
        c.linked,
    );
    if let Some(e) = ans.estimate.as_mut() {
        e.decode_tokens_per_s = Some(crate::advisor::contract::round1(s.decode_tokens_per_s));
    }
    ans.serving = Some(ServingJson::from_serving(&s, &c.gpu.id));
    let lines = block(ctx, &c, &s, ctx.lang);
    ans.rendered.text(lines.0);
    ans.rendered.bullets(lines.1);
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
fn block(ctx: &Context<'_>, c: &Config<'_>, s: &Serving, lang: Lang) -> (String, Vec<String>) {
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
    let fits = s.kv_capacity_tokens >= (s.input_tokens + s.output_tokens) as f64;
    if !fits {
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
            "{}{}{}{:.2}{}{}{}",
            t(lang, "KV cache 可放 ", "KV cache holds "),
            num(s.kv_capacity_tokens),
            t(lang, " token，最多同时 ", " tokens: at most "),
            s.max_concurrency,
            t(
                lang,
                " 个这样的请求；单个请求最长 ",
                " such requests at once; the longest single request "
            ),
            num(s.max_context_tokens),
            t(lang, " token", " tokens"),
        ));
    }
    b.push(format!(
        "{}{:.0}{}{:.2}{}",
        t(lang, "单路生成约 ", "one stream decodes about "),
        s.decode_tokens_per_s,
        t(
            lang,
            " tokens/s，空载首字约 ",
            " tokens/s; time to first token when idle about "
        ),
        s.ttft_idle_s,
        t(lang, " 秒", " s"),
    ));
    let mut load = format!(
        "{}{}{}{:.0}{}{:.2}{}{:.0}{}",
        t(lang, "按 ", "at "),
        num(s.concurrency),
        t(
            lang,
            " 路并发：每路约 ",
            " concurrent requests: each about "
        ),
        s.per_user_tokens_per_s,
        t(lang, " tokens/s，首字约 ", " tokens/s, first token about "),
        s.ttft_s,
        t(lang, " 秒，总输出吞吐约 ", " s, total output about "),
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
            let units = units_for(o, s.replicas * c.tp, c.cards);
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
    b.push(settings(s, c, lang, a.gguf_bits));
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
        LoadFrom::DailyUsers => out.push_str(t(
            lang,
            "；日活按 5% 同时在线折算并发",
            "; daily users taken as 5 % at once at the peak",
        )),
        LoadFrom::Qps => out.push_str(t(
            lang,
            "；QPS 按 Little 定律（QPS × 每个请求在目标速度下的时长）折算并发",
            "; QPS turned into concurrency by Little's law (QPS × a request's time at the targets)",
        )),
        LoadFrom::None => out.push_str(t(
            lang,
            "；没说负载，按目标内能承载的最大并发算",
            "; no load given: the most the targets allow",
        )),
        LoadFrom::Concurrency => {}
    }
    out.push_str(t(
        lang,
        "。请求长度、引擎或目标不同，告诉我即可重算",
        ". Tell me your request size, engine or targets to recompute",
    ));
    out
}

fn settings(s: &Serving, c: &Config<'_>, lang: Lang, gguf: Option<f64>) -> String {
    let seqs = s.max_concurrency.floor().max(1.0) as u64;
    let len = s.max_model_len;
    let flags = match s.engine {
        Engine::Vllm => format!(
            "`--gpu-memory-utilization 0.90 --max-model-len {len} --max-num-seqs {seqs} --tensor-parallel-size {}`",
            c.tp
        ),
        Engine::Sglang => format!(
            "`--mem-fraction-static --context-length {len} --max-running-requests {seqs} --tp {}`",
            c.tp
        ),
        Engine::TrtLlm => format!(
            "`--max_batch_size {seqs} --max_num_tokens 8192 --kv_cache_free_gpu_mem_fraction 0.9 --tp_size {}`",
            c.tp
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
