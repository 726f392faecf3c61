//! Changes relative to the previous turn ("预算再加两千", "并发再加 10 个", "increase the
//! budget by 2000") and the language the customer asks the replies in ("换成英文回答").
//! The relative numbers are read before the other slots and their spans blanked out, so
//! "再加 20 路并发" is +20, not a concurrency of 20. `Asked::over` applies them.

use super::Lang;
use crate::advisor::lexicon::{Cue, Lexicon, Scan, Slot};
use crate::advisor::workload::{Asked, ScaleTarget};

/// Reads the relative changes into `a`; returns their spans (byte ranges of `text`),
/// which the other slots must not read.
pub fn relative(
    lex: &Lexicon,
    scan: &Scan,
    text: &str,
    usd_cny: f64,
    a: &mut Asked,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut take = |slot: Slot, sign: f64| {
        let f = lex.find_in(scan, slot, text, false)?;
        let said = &text[f.start..f.end];
        let rate = if said.contains('$') || said.contains("usd") || said.contains("dollar") {
            usd_cny
        } else {
            1.0
        };
        spans.push((f.start, f.end));
        Some(sign * f.value * rate)
    };
    a.budget_change = take(Slot::ChangeBudgetMore, 1.0)
        .or_else(|| take(Slot::ChangeBudgetLess, -1.0))
        .filter(|d| d.abs() >= 1.0 && d.abs() <= 1e9);
    a.concurrency_change = take(Slot::ChangeConcurrencyMore, 1.0)
        .or_else(|| take(Slot::ChangeConcurrencyLess, -1.0))
        .filter(|d| d.abs() >= 1.0 && d.abs() <= 1e6)
        .map(|d| d as i64);
    const TARGETS: [(Slot, ScaleTarget); 4] = [
        (Slot::ChangeTargetBudget, ScaleTarget::Budget),
        (Slot::ChangeTargetConcurrency, ScaleTarget::Concurrency),
        (Slot::ChangeTargetContext, ScaleTarget::Context),
        (Slot::ChangeTargetData, ScaleTarget::Data),
    ];
    let target = || {
        TARGETS
            .into_iter()
            .find(|(s, _)| lex.has_in(scan, *s))
            .map(|(_, t)| t)
    };
    let factor = lex
        .find_in(scan, Slot::ChangeScaleUp, text, false)
        .or_else(|| lex.find_in(scan, Slot::ChangeScaleDown, text, false))
        .map(|f| f.value);
    a.scaled = factor.map(|k| (k, target()));
    a.changed_to = take(Slot::ChangeBare, 1.0).filter(|v| *v >= 1.0 && *v <= 1e9);
    if a.changed_to.is_some() {
        a.changed_to_tokens = lex
            .find_in(scan, Slot::ChangeBare, text, true)
            .map(|f| f.value);
        // "预算打错了，是两万": the slot the change's own words name ("不对，还是 10，但上下文
        // 要 32k" names none for its 10); a data size is not one a bare number changes.
        let said = lex
            .find_in(scan, Slot::ChangeBare, text, false)
            .map(|f| &text[f.start..f.end]);
        a.changed_slot = said.and_then(|said| {
            TARGETS
                .into_iter()
                .find(|(s, t)| *t != ScaleTarget::Data && lex.find(*s, said).is_some())
                .map(|(_, t)| t)
        });
        a.replaced = [false, true].map(|tokens| {
            lex.find_in(scan, Slot::ChangeReplaced, text, tokens)
                .map(|f| f.value)
        });
    }
    spans
}

/// The language the question asks the replies in, if it asks.
pub fn reply_lang(lex: &Lexicon, scan: &Scan) -> Option<Lang> {
    if lex.has_in(scan, Cue::ReplyEn) {
        Some(Lang::En)
    } else if lex.has_in(scan, Cue::ReplyZh) {
        Some(Lang::Zh)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::advisor::fixtures::advisor;

    /// The relative changes and the reply language of `question`, as "k=v" pairs.
    fn check(question: &str, expected: &str) {
        let p = advisor()
            .parser
            .parse(question, advisor().catalog.billing.usd_cny);
        let a = &p.asked;
        let mut got = Vec::new();
        if let Some(d) = a.budget_change {
            got.push(format!("budget{d:+}"));
        }
        if let Some(d) = a.concurrency_change {
            got.push(format!("concurrency{d:+}"));
        }
        if let Some(v) = a.changed_to {
            got.push(format!("to={v}"));
        }
        if let Some(t) = a.changed_slot {
            got.push(format!("slot={t:?}"));
        }
        if let Some((k, target)) = a.scaled {
            got.push(format!("scaled={k}:{target:?}"));
        }
        if let Some(b) = a.budget_cny {
            got.push(format!("budget={b}"));
        }
        if let Some(c) = a.concurrency {
            got.push(format!("concurrency={c}"));
        }
        if let Some(l) = p.reply_lang {
            got.push(format!("reply={}", l.id()));
        }
        assert_eq!(got.join(" "), expected, "{question:?}");
    }

    #[test]
    fn changes_relative_to_the_last_turn() {
        check("预算再加两千", "budget+2000");
        check("預算再多加 1500 塊", "budget+1500");
        check("再加 3000 块预算呢", "budget+3000");
        check("预算砍掉一千呢", "budget-1000");
        check("could we cut the budget by 500 yuan?", "budget-500");
        check("raise the budget by $200", "budget+1440");
        // An absolute change is the slot itself.
        check("预算加到 8000", "budget=8000");
        check("并发再加 10 个", "concurrency+10");
        check("再加 20 路并发", "concurrency+20");
        check("add 5 more users", "concurrency+5");
        check("并发降到 8", "concurrency=8");
        check("那提到 8000 呢", "to=8000");
        check("预算打错了，是两万", "to=20000 slot=Budget");
        check("sorry, 60 not 30", "to=60");
        check("sorry 打错了，并发是 16 不是 6", "concurrency=16");
        check("不对，还是 10，但上下文要 32k", "to=10");
    }

    #[test]
    fn the_language_asked_for_the_replies() {
        check("换成英文回答", "reply=en");
        check("能不能用英语回复", "reply=en");
        check("answer in English please", "reply=en");
        check("English pls", "reply=en");
        check("请用中文回答", "reply=zh");
        check("Can you reply in Chinese?", "reply=zh");
        check("英文客服机器人用什么卡", "");
        check("a chatbot that answers in English and Chinese", "");
    }

    #[test]
    fn a_slot_doubled_or_halved() {
        check("double the data", "scaled=2:Some(Data)");
        check("并发翻倍呢", "scaled=2:Some(Concurrency)");
        check("预算减半", "scaled=0.5:Some(Budget)");
        check("那就翻一倍", "scaled=2:None");
        check("double-check the price", "");
    }
}
