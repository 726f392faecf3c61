//! Step 1: the question as the patterns see it. Cut to [`MAX_QUESTION_BYTES`], then
//! [`Lexicon::normalise`]: full-width → ASCII, lowercase, one space per whitespace run,
//! traditional → simplified characters and typos from `intents/normalise.toml`. The
//! language and whether it is written as a question are read here too.

use super::{Lang, MAX_QUESTION_BYTES};
use crate::advisor::lexicon::Lexicon;

/// The normalised question (at most [`MAX_QUESTION_BYTES`] of `raw`, cut at a char
/// boundary).
pub fn question(lex: &Lexicon, raw: &str) -> String {
    lex.normalise(&unquoted(cut(raw)))
}

/// A forwarded ticket or e-mail without its quoted lines ("> 之前他问过 4090 能不能跑"):
/// what was asked before is not this question, unless the quote is all there is.
///
/// Flattened to one line ("…能配吗？ > 之前他问过 4090 > 我们回复…"), a quote marker (a `>`
/// after a space, before a word, not a number as in "> 40GB") ends the question when a
/// question was asked before it.
pub fn unquoted(text: &str) -> std::borrow::Cow<'_, str> {
    let quoted = |l: &str| l.trim_start().starts_with(['>', '＞']);
    if !text.lines().any(quoted) {
        let marker = text.char_indices().find(|&(i, c)| {
            let mut after = text[i + c.len_utf8()..].chars();
            matches!(c, '>' | '＞')
                && text[..i].ends_with(char::is_whitespace)
                && after.next().is_some_and(char::is_whitespace)
                && after
                    .find(|c| !c.is_whitespace())
                    .is_some_and(|c| !c.is_ascii_digit())
        });
        return match marker {
            Some((i, _)) if is_question(&text[..i]) => text[..i].trim_end().into(),
            _ => text.into(),
        };
    }
    let kept: Vec<&str> = text.lines().filter(|l| !quoted(l)).collect();
    if kept.iter().all(|l| l.trim().is_empty()) {
        return text.into();
    }
    kept.join("\n").into()
}

/// At most [`MAX_QUESTION_BYTES`] of `raw`, cut at a char boundary.
pub fn cut(raw: &str) -> &str {
    let mut cut = raw.len().min(MAX_QUESTION_BYTES);
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    &raw[..cut]
}

/// The language a question is written in, and whether the text says so clearly enough
/// to switch a conversation's: Chinese when CJK ideographs appear, unless English words
/// outnumber them three to one and are at least five ("Could you kindly recommend a
/// setup (信创)?"); else English when any Latin letter does. Clear when one language
/// outweighs the other (ideographs at least twice the English words, or the reverse
/// rule above); "INT8", "H100?" or a half-and-half mix are not.
pub fn lang(text: &str) -> Option<(Lang, bool)> {
    let han = text
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c) || ('\u{3400}'..='\u{4dbf}').contains(c))
        .count();
    // Words of letters only: "Qwen2.5-72B", "DeepSeek-R1-Distill" and "q4_k_m" are names,
    // not English; "fine-tune" and "what's" are words.
    let words = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '\'')))
        .map(|w| w.trim_matches(['.', '-', '\'']))
        .filter(|w| {
            w.len() >= 2
                && w.bytes()
                    .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'\'')
        })
        .count();
    if han > 0 {
        if words >= 5 && words >= 3 * han {
            Some((Lang::En, true))
        } else {
            Some((Lang::Zh, han >= 2 * words))
        }
    } else if text.chars().any(|c| c.is_ascii_alphabetic()) {
        Some((Lang::En, words >= 2))
    } else {
        None
    }
}

/// Written as a question: ends with ? / 吗 / 呢 / 么.
pub fn is_question(text: &str) -> bool {
    // A question mark anywhere: "能行不？不量化那种" asks, then adds a condition.
    text.contains(['?', '？'])
        || text
            .trim_end_matches(['.', '。', '!', '！', ' '])
            .ends_with(['吗', '呢', '么'])
        // "3090 能全参微调 7B 吗，用 LLaMA-Factory": 吗 asks wherever it is.
        || text.contains('吗')
        // "ok and what about gpt-oss-20b on a 4090 instead": asked without its mark.
        || {
            let t = text.trim_start();
            let t = ["ok", "okay", "so", "right"]
                .iter()
                .find_map(|w| t.strip_prefix(w))
                .map_or(t, |r| r.trim_start_matches([',', ' ']));
            let t = t.strip_prefix("and ").unwrap_or(t);
            t.starts_with("what about ") || t.starts_with("how about ") || asks_first(t)
        }
}

/// Chat asks without the mark ("whats the tok/s on a 3090 for llama 8b", "can a 4090 run
/// it"): an English question word or a verb put before its subject opens the message.
fn asks_first(text: &str) -> bool {
    const OPENERS: &[&str] = &[
        "what", "whats", "what's", "how", "hows", "how's", "which", "can", "could", "does", "do",
        "is", "are", "will", "would", "should", "any",
    ];
    let word = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .next()
        .unwrap_or("");
    OPENERS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advisor::fixtures::lexicon;

    /// `input` normalised is `expected`, and normalising that again changes nothing.
    fn check(input: &str, expected: &str) {
        let lex = lexicon();
        let got = question(&lex, input);
        assert_eq!(got, expected, "{input:?}");
        assert_eq!(question(&lex, &got), got, "twice: {input:?}");
    }

    #[test]
    fn the_language_a_question_shows() {
        for (text, shown, sure) in [
            ("4090 能跑 70b 吗", Lang::Zh, true),
            (
                "我们想 deploy 一个 qwen3-32b 的 rag service，qps 大概 5",
                Lang::Zh,
                true,
            ),
            ("hi team, customer asks: 4090 能跑 70b 吗", Lang::Zh, false),
            (
                "deepseek-r1-distill-qwen-32b 推理，用 vllm 部署",
                Lang::Zh,
                true,
            ),
            (
                "could you kindly recommend a setup (信创) for a 7b model?",
                Lang::En,
                true,
            ),
            ("what about h100", Lang::En, true),
            ("int8", Lang::En, false),
            ("h100?", Lang::En, false),
        ] {
            assert_eq!(lang(text), Some((shown, sure)), "{text}");
        }
        assert_eq!(lang("4090 ×2"), None);
    }

    #[test]
    fn width_case_space_traditional_and_typos_fold() {
        check("  ＡＢＣ\t\n 4090×2 ", "abc 4090x2");
        check("兩張４０９０訓練 13B 嗎", "两张4090训练 13b 吗");
        check("顯寸夠不夠", "显存够不够");
        check("預算每個月三千", "预算每个月三千");
        check("Qwen2.5-7B 推里", "qwen2.5-7b 推理");
        check("", "");
    }

    #[test]
    fn quoted_lines_of_a_forwarded_ticket_are_left_out() {
        check(
            "客户问：预算 6000 能配吗？\n> 之前他问过 4090\n麻烦再看下",
            "客户问:预算 6000 能配吗? 麻烦再看下",
        );
        check("> only a quote", "> only a quote");
        check(
            "客户问：预算 6000 能配吗？ > 之前他问过 4090 > 我们回复单卡不行",
            "客户问:预算 6000 能配吗?",
        );
        check("显存 > 40GB 的卡有哪些?", "显存 > 40gb 的卡有哪些?");
        check(
            "Hi, customer asks: > can a 4090 run 70B?",
            "hi, customer asks: > can a 4090 run 70b?",
        );
        check(
            "Hi team,\n  > H100?\nCan a 3090 run it?",
            "hi team, can a 3090 run it?",
        );
    }

    #[test]
    fn a_digit_after_wan_counts_in_thousands() {
        check("2万3 的预算", "2.3万 的预算");
        check("全年 9 万 6 的预算", "全年 9.6万 的预算");
        check("3千5", "3.5千");
        check("1万 5 张卡", "1万 5 张卡");
        check("1万5000", "1万5000");
        check("每月别超 3 千五", "每月别超 3.5千");
        check("预算两千五一个月", "预算两千五 一个月");
        check("六千一个月的预算", "六千 一个月的预算");
        check("一万一年够吗", "一万 一年够吗");
        check("十一个月", "十一个月");
        check("预算 1w5/月", "预算 1.5w/月");
        check("预算 1w2 一个月", "预算 1.2w 一个月");
        check("2万3一年", "2.3万 一年");
        check("月预算一个w", "月预算一万");
        check("两个w 能租啥", "两万 能租啥");
        check("一个web服务", "一个web服务");
    }

    #[test]
    fn numbers_said_in_english_words_are_digits() {
        check(
            "qwen3 thirty two b for fifty users",
            "qwen3 32b for 50 users",
        );
        check("thirty six thousand rmb total", "36000 rmb total");
        check(
            "mixtral eight by seven b on two 3090s",
            "mixtral 8x7b on two 3090s",
        );
        check(
            "a seven b model with eight k context",
            "a 7b model with 8k context",
        );
        check("twenty-four gigs, two hundred users", "24 gigs, 200 users");
        // A lone unit stays a word; words inside other words are left alone.
        check("two cards, one node", "two cards, one node");
        check(
            "someone often tends to listen",
            "someone often tends to listen",
        );
        check("模型用qwen3 thirty two b", "模型用qwen3 32b");
        // Digits spoken one by one, and the count after them.
        check("三零九零一张 能微调吗", "3090一张 能微调吗");
        check("四零九零", "4090");
        // A share in words.
        check("高峰就按百分之十算吧", "高峰就按10%算吧");
        check("峰值百分之 2.5", "峰值2.5%");
        check("maybe five percent at peak", "maybe 5% at peak");
        check("ten percent", "10%");
    }

    #[test]
    fn a_long_question_is_cut_at_a_char_boundary() {
        let long = "显".repeat(MAX_QUESTION_BYTES);
        assert!(question(&lexicon(), &long).len() <= MAX_QUESTION_BYTES);
    }
}
