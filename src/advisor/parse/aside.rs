//! Asides ahead of the question: someone else's claim ("有人说满血 R1 用 8 张 A100 就够",
//! "A colleague insists 8x A100 is enough"), an earlier attempt ("之前 2 张 A800 部署
//! qwen-72b…"), a price seen elsewhere ("Vast lists 4090s from $0.31/h"), what the
//! customer read ("I read that…"), or hardware the customer already has when the question
//! asks what to rent ("我们公司有台 8 卡 4090 在跑别的业务…推荐租什么"). Their cards,
//! counts, budgets and prices are not the question's; the question is what follows.
//!
//! The markers are data (`aside.*` in intents/slots.toml). A sentence is an aside when it
//! has a marker and a sentence without one follows; a contrast after the marker in the
//! same sentence ("…被驳回了，这次老板批了每月一万二") ends the aside there.

use crate::advisor::lexicon::{Lexicon, Slot};

/// The sentences of normalised `text`: ends at ? ! ; 。, a line break, or a full stop
/// followed by a space ("Qwen2.5-7B" and "v0.10.1" go on).
fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let split = match c {
            '?' | '!' | ';' | '。' | '\n' => true,
            '.' => text[end..].chars().next().is_none_or(char::is_whitespace),
            _ => false,
        };
        if split {
            out.push((from, end));
            from = end;
        }
    }
    if !text[from..].trim().is_empty() {
        out.push((from, text.len()));
    }
    out
}

/// `text` (normalised) without its asides, when it has any and a question follows them.
/// The second part says whether the question followed a lead ("想问：").
pub fn question_only(lex: &Lexicon, text: &str) -> Option<(String, bool)> {
    match lead(lex, text) {
        Some(q) => Some((q, true)),
        None => without_asides(lex, text).map(|q| (q, false)),
    }
}

/// What follows the question's lead ("…两张卡利用率一高一低。想问：是不是因为机器没有
/// NVLink？"), when the text has one after some background.
fn lead(lex: &Lexicon, text: &str) -> Option<String> {
    let lead = lex
        .all(Slot::AsideLead, text)
        .into_iter()
        .max_by_key(|m| m.end)?;
    let rest = &text[lead.end..];
    (!rest.trim().is_empty() && lead.start > 0).then(|| rest.to_string())
}

/// The question a long message closes with, after its background: the sentences at the
/// end that ask (end with `?`, 吗, 呢 or 么), when at least two sentences that do not ask
/// come before them ("…我们在你们的 8 卡 A100 上做 RL 训练，老板问要不要换。请问从 A100
/// 升级到 H100 值不值得？实际能快多少？"). A short closing without a question ("谢谢！",
/// "Thanks.") is passed over.
pub fn last_question(text: &str) -> Option<String> {
    let parts = sentences(text);
    let asks = |s: &str| {
        let t = s.trim_end_matches(['.', '。', '!', ' ', ',', '\n']);
        t.ends_with(['?', '吗', '呢', '么'])
    };
    let short = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count() < 8;
    let mut end = parts.len();
    while end > 0 && !asks(&text[parts[end - 1].0..parts[end - 1].1]) {
        if !short(&text[parts[end - 1].0..parts[end - 1].1]) {
            return None;
        }
        end -= 1;
    }
    let mut start = end;
    while start > 0 && asks(&text[parts[start - 1].0..parts[start - 1].1]) {
        start -= 1;
    }
    if start == end || start < 2 {
        return None;
    }
    Some(text[parts[start].0..parts[end - 1].1].to_string())
}

fn without_asides(lex: &Lexicon, text: &str) -> Option<String> {
    let parts = sentences(text);
    if parts.len() < 2 {
        return None;
    }
    // Each sentence's aside, as a byte range (empty when it has none): from the start of
    // the clause with the marker ("手上只有一张 4090，之前跑 7B…" keeps its card) to the
    // sentence's end or a contrast.
    let mut cut: Vec<(usize, usize)> = Vec::with_capacity(parts.len());
    for (k, &(from, to)) in parts.iter().enumerate() {
        let s = &text[from..to];
        let later = &text[to..];
        // The first marker in the sentence; an attempt that failed is the whole sentence.
        let failed = lex
            .all(Slot::AsideFailed, s)
            .into_iter()
            .min_by_key(|m| m.start);
        let marker = lex
            .all(Slot::AsideOther, s)
            .into_iter()
            .chain(failed)
            .min_by_key(|m| m.start)
            .or_else(|| {
                lex.find(Slot::AsideOwned, s)
                    .filter(|_| lex.find(Slot::AsideRent, later).is_some())
            });
        // A question is no aside ("听说两张 A100 40G 就够？"), nor a claim the rest asks
        // about ("People say Scout fits on one H100. True with an 8k context?").
        let asks = s.trim_end().ends_with('?') || lex.find(Slot::AsideVerify, later).is_some();
        let aside = match marker {
            Some(m) if k + 1 < parts.len() && !asks => {
                let start = if failed.is_some() {
                    from
                } else {
                    s[..m.end].rfind([',', ':']).map_or(from, |i| from + i + 1)
                };
                let end = lex
                    .find(Slot::AsideEnd, &s[m.end..])
                    .map_or(to, |e| from + m.end + e.start);
                (start, end)
            }
            _ => (from, from),
        };
        cut.push(aside);
    }
    // The last sentence is the question: no aside in it.
    if cut.iter().all(|(start, end)| start == end) {
        return None;
    }
    let kept: String = parts
        .iter()
        .zip(&cut)
        .map(|(&(from, to), &(start, end))| format!("{}{}", &text[from..start], &text[end..to]))
        .collect();
    (!kept.trim().is_empty()).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::question_only;
    use crate::advisor::fixtures::advisor;

    fn check(question: &str, expected: Option<&str>) {
        let lex = advisor().parser.lexicon();
        let text = crate::advisor::parse::normalise::question(lex, question);
        let got = question_only(lex, &text).map(|(q, _)| q);
        assert_eq!(got.as_deref().map(str::trim), expected, "{question:?}");
    }

    #[test]
    fn asides_ahead_of_the_question_are_left_out() {
        check(
            "A colleague insists 8x A100 80G is enough. Without any offload, what would you rent for Llama-3-70B?",
            Some("without any offload, what would you rent for llama-3-70b?"),
        );
        check(
            "上个季度申请的每月 2000 预算被财务驳回了，这次老板批了每月一万二。这个预算能租到什么卡？",
            Some(",这次老板批了每月一万二。这个预算能租到什么卡?"),
        );
        // Cards the customer has are the question's when it asks whether they run it.
        check("我们公司有台 8 卡 4090。能跑 Qwen2.5-72B 吗？", None);
        check(
            "我们公司有台 8 卡 4090 在跑别的业务。另外想租卡跑 Qwen2.5-32B，推荐租什么？",
            Some("另外想租卡跑 qwen2.5-32b,推荐租什么?"),
        );
        // One sentence, a claim asked about, or a question: nothing left out.
        check("有人说 4090 能跑 70B，真的吗？", None);
        check("有人说 4090 能跑 70B。真的吗？", None);
        check(
            "想 QLoRA 一下 Llama-3.3-70B，听说两张 A100 40G 就够？那一个月多少钱",
            None,
        );
        check("4 张 A100 40G 能跑 Qwen-72B 吗？", None);
    }

    #[test]
    fn a_long_message_closes_with_its_question() {
        let lex = advisor().parser.lexicon();
        let last_question =
            |t: &str| super::last_question(&crate::advisor::parse::normalise::question(lex, t));
        let q = last_question(
            "我们在跑 Qwen2.5-14B。机器是两张 A100。请问数据盘能扩容吗？默认多大？谢谢！",
        );
        assert_eq!(q.as_deref(), Some("请问数据盘能扩容吗?默认多大?"));
        // Too little background, or a closing that does not ask: no question of its own.
        assert_eq!(
            last_question("我们在跑 Qwen2.5-14B。请问数据盘能扩容吗?"),
            None
        );
        assert_eq!(
            last_question("We run Llama. On two cards. Is NVLink needed? Please size it for us."),
            None
        );
    }

    #[test]
    fn a_closing_topic_question_is_asked_of_the_background_workload() {
        let parse = |q: &str| advisor().parser.parse(q, 7.2);
        let p = parse("我们在你们的 8 卡 A100 上全参训练 Qwen2.5-7B。每 200 步存一次 checkpoint。请问数据盘要多大才够？不够怎么加？");
        assert!(p.background);
        assert_eq!(p.topics.first().map(String::as_str), Some("storage"));
        assert_eq!(p.asked.model.as_deref(), Some("qwen2.5-7b"));
        // Asked of the workload itself, the closing question is no topic's.
        let p = parse("We serve Qwen2.5-7B to 40 agents. Context is 8k. Which configuration do you suggest, and do we need NVLink?");
        assert!(!p.background);
        let p = parse("We serve Qwen2.5-7B to 40 agents. Context is 8k. What's the monthly cost, and do we need NVLink?");
        assert!(!p.background);
        // A can-you of the service ("能不能扩容") with the machine in the background asks
        // no verdict on that machine.
        let p = parse("我们准备在你们的 8 卡 H100 整机上部署 DeepSeek-R1。权重大约 700GB，日志半年会涨到 3TB。想问：整机自带多大的盘，不够的话能不能扩容，加盘怎么收费？");
        assert!(p.background);
        assert_eq!(p.topics.first().map(String::as_str), Some("storage"));
        let p = parse("We rent two A100 40G from you for a LoRA run. The project lasts six months. Can you issue invoices for monthly payments, and does the instance renew automatically?");
        assert!(p.background);
        assert!(p.topics.iter().any(|t| t == "billing"));
        // Feasibility asked of the background's card stays a verdict.
        let p = parse("我们有两张 4090。想跑 Qwen2.5-32B 的 AWQ 版。没有 NVLink 的话能跑吗？");
        assert!(!p.background);
    }

    #[test]
    fn the_closing_question_names_the_cards_and_keeps_the_requirement() {
        let parse = |q: &str| advisor().parser.parse(q, 7.2);
        // The cards the closing question asks about, not the ones owned before.
        let p = parse("我们本地有两张 3090，用 vLLM 跑 Qwen2.5-32B 的量化版。业务方希望换回原版权重。我们打算租两张 4090 替换本地的 3090。问题是：两张 4090 直接跑 Qwen2.5-32B 的 BF16 原版，上下文 4096，能跑得起来吗？");
        assert_eq!(p.asked.gpus.first().map(String::as_str), Some("rtx4090"));
        assert_eq!(p.asked.gpu_count, Some(2));
        // A requirement said in the background stands.
        let p = parse("我们单位按要求只能用国产算力。已经有一台 8 卡昇腾 910B 的服务器。之前有人说要四台 A100 才行。请问：8 张 910B 能不能跑满血版 DeepSeek-R1？");
        assert!(p.asked.domestic);
        // The provider's machines asked about, with a model the catalog does not know in
        // the background: the topic.
        let p = parse("We're putting a Qwen-based shopping assistant on one of your H100 nodes. Users in Shanghai wait 250 ms today. Where exactly are your H100 machines located, and what latency should we expect from mainland China?");
        assert!(p.background);
        assert_eq!(p.asked.gpu_count, None);
        assert!(p.unknown_model.is_none());
    }

    #[test]
    fn a_closing_price_of_a_card_named_in_it_is_that_price() {
        let parse = |q: &str| advisor().parser.parse(q, 7.2);
        let p = parse("我们用 LoRA fine-tune Qwen2.5-14B。评估过要 4 张 A100 40G。财务想先问清楚价钱。想问下：4 张 A100 40G 月付总共多少钱？如果转年付又怎么算？");
        assert!(p.background);
        assert!(!p.asked.has_workload());
        assert_eq!(p.asked.gpus, vec!["a100-40g".to_string()]);
        assert_eq!(p.asked.gpu_count, Some(4));
        // A price asked of the workload ("how much a month for that?") is not a card's.
        let p = parse("We LoRA fine-tune Qwen2.5-14B. The dataset is 50k samples. How much would that cost per month?");
        assert!(p.asked.has_workload());
    }

    #[test]
    fn the_question_keeps_the_workload_an_aside_describes_but_not_its_cards() {
        let parse = |q: &str| advisor().parser.parse(q, 7.2);
        let p = parse(
            "实验室那 8 张 3090 上 LoRA 微调 Qwen1.5-14B 爆显存了。这次打算在你们这租卡做同样的 LoRA，推荐哪种卡？",
        );
        assert_eq!(p.asked.model.as_deref(), Some("qwen1.5-14b"));
        assert_eq!(p.asked.task, Some(crate::advisor::workload::Task::Lora));
        assert!(p.asked.gpus.is_empty() && p.asked.gpu_count.is_none());
        let p = parse("Elsewhere I've seen 8xH100 nodes at $20-32 per hour. Our ceiling is 20,000 yuan a month. What can we get?");
        assert_eq!(p.asked.budget_cny, Some(20000.0));
        assert!(p.asked.gpus.is_empty());
        // A failed attempt is the whole sentence, its cards and its duration; a plan given
        // up ends where the new one starts.
        let p = parse("我司在 8 卡 L40 上用 deepspeed ZeRO-2 做 Yi-34B 的 LoRA 微调，仍然报 OOM。折腾了两周，决定改为租用贵司的卡来跑。请问 Yi-34B 做 LoRA 推荐什么配置？");
        assert!(p.asked.gpus.is_empty() && p.asked.gpu_count.is_none());
        assert_eq!(p.asked.months, None);
        let p = parse("我们原本想在 8×4090 上跑满血 DeepSeek-R1，评估下来改成部署 DeepSeek-R1-Distill-Llama-70B 的量化版。请推荐配置。");
        assert_eq!(
            p.asked.model.as_deref(),
            Some("deepseek-r1-distill-llama-70b")
        );
        assert!(p.asked.gpus.is_empty());
        // Asked whether the cards tried can do it: those cards.
        let p = parse("2x 4090, trying Qwen2.5-32B-Instruct in bf16 and it OOMs while loading weights. Is this config just impossible?");
        assert_eq!(p.asked.gpus, vec!["rtx4090".to_string()]);
        // Cards to replace stay the question's.
        let p = parse("LoRA on Qwen2.5-7B on your V100S box crashes with OOM. What card should I use instead?");
        assert_eq!(p.asked.gpus, vec!["v100s-32g".to_string()]);
    }
}
