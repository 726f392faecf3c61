//! Rendering the neutral reply for each platform: Telegram HTML (escaped: user text and
//! catalog text can never inject markup), Discord markdown with an embed for the memory
//! bill and price, and splitting at a platform's message limit on line boundaries.

use crate::advisor::reply::{gb, money_range, Block, Reply};
use crate::advisor::Answer;

/// Telegram's message limit, characters.
pub const TELEGRAM_MAX_CHARS: usize = 4096;
/// Discord's message limit, characters.
pub const DISCORD_MAX_CHARS: usize = 2000;

/// Escapes text for Telegram's HTML parse mode (`<`, `>`, `&`; quotes for attributes).
pub fn escape_html(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// `**bold**` spans (written by us) to `<b>`, on already escaped text. An unmatched
/// `**` stays literal.
fn bold_html(escaped: &str) -> String {
    let parts: Vec<&str> = escaped.split("**").collect();
    if parts.len() % 2 == 0 {
        return escaped.to_string();
    }
    let mut o = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i % 2 == 1 {
            o.push_str("<b>");
            o.push_str(p);
            o.push_str("</b>");
        } else {
            o.push_str(p);
        }
    }
    o
}

/// Telegram HTML.
pub fn telegram_html(reply: &Reply) -> String {
    let mut o = String::new();
    for b in &reply.blocks {
        match b {
            Block::Title(t) => {
                o.push_str(&format!("<b>{}</b>\n", escape_html(&t.replace("**", ""))))
            }
            Block::Text(t) => {
                o.push_str(&bold_html(&escape_html(t)));
                o.push('\n');
            }
            Block::Bullets(items) => {
                for i in items {
                    o.push_str("• ");
                    o.push_str(&bold_html(&escape_html(i)));
                    o.push('\n');
                }
            }
            Block::Table { head, rows } => {
                o.push_str("<pre>");
                o.push_str(&escape_html(&head.join(" | ")));
                o.push('\n');
                for r in rows {
                    o.push_str(&escape_html(&r.join(" | ")));
                    o.push('\n');
                }
                o.push_str("</pre>\n");
            }
        }
        o.push('\n');
    }
    o.trim_end().to_string()
}

/// Discord markdown: our markdown, with tables as code blocks (Discord has no tables).
pub fn discord_markdown(reply: &Reply) -> String {
    let mut o = String::new();
    for b in &reply.blocks {
        match b {
            Block::Table { head, rows } => {
                o.push_str("```\n");
                o.push_str(&head.join(" | "));
                o.push('\n');
                for r in rows {
                    o.push_str(&r.join(" | "));
                    o.push('\n');
                }
                o.push_str("```\n");
            }
            other => {
                let one = Reply {
                    lang: reply.lang,
                    blocks: vec![other.clone()],
                };
                o.push_str(&one.markdown());
                o.push('\n');
            }
        }
        o.push('\n');
    }
    o.trim_end().to_string()
}

/// An embed's fields (name, value): the memory bill and the recommended price.
pub fn embed_fields(a: &Answer) -> Vec<(String, String)> {
    let zh = a.lang == "zh";
    let mut f = Vec::new();
    if let Some(e) = &a.estimate {
        f.push((
            if zh { "显存估算" } else { "Memory" }.to_string(),
            format!(
                "{} GB = weights {} + KV {} + act {} + grad {} + opt {} + CUDA {}",
                gb(e.total_gb),
                gb(e.weights_gb),
                gb(e.kv_cache_gb),
                gb(e.activations_gb),
                gb(e.gradients_gb),
                gb(e.optimizer_gb),
                gb(e.overhead_gb)
            ),
        ));
    }
    if let Some(r) = &a.recommendation {
        f.push((
            if zh { "推荐" } else { "Recommended" }.to_string(),
            format!(
                "{} × {} — {}{} ({} {})",
                r.count,
                r.gpu,
                money_range(r.monthly_cny),
                if zh { "/月" } else { "/month" },
                if zh { "年付" } else { "annual" },
                money_range(r.annual_monthly_cny)
            ),
        ));
    }
    f
}

/// Splits `text` into messages of at most `max` characters at line boundaries (a
/// longer single line is cut at a character boundary).
pub fn split_message(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_len = 0;
    for line in text.split_inclusive('\n') {
        let mut chars: Vec<char> = line.chars().collect();
        while chars.len() > max {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
                cur_len = 0;
            }
            out.push(chars.drain(..max).collect());
        }
        if cur_len + chars.len() > max {
            out.push(std::mem::take(&mut cur));
            cur_len = 0;
        }
        cur_len += chars.len();
        cur.extend(chars);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|s| s.trim_end().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advisor::parse::Lang;

    #[test]
    fn html_is_escaped_and_bold_is_ours() {
        let mut r = Reply::new(Lang::En);
        r.text("**Verdict**: <script>alert(1)</script> & _x_");
        r.bullets(vec!["a < b".into()]);
        r.table(vec!["h".into()], vec![vec!["<td>".into()]]);
        let h = telegram_html(&r);
        assert!(
            h.contains("<b>Verdict</b>: &lt;script&gt;alert(1)&lt;/script&gt; &amp; _x_"),
            "{h}"
        );
        assert!(h.contains("• a &lt; b"));
        assert!(h.contains("<pre>h\n&lt;td&gt;\n</pre>"));
        assert!(!h.contains("<script>"));
    }

    #[test]
    fn odd_bold_marks_stay_literal() {
        assert_eq!(bold_html("a ** b"), "a ** b");
        assert_eq!(bold_html("**a** b"), "<b>a</b> b");
    }

    #[test]
    fn splits_on_lines_within_limits() {
        let text = "line of text\n".repeat(1000);
        for max in [TELEGRAM_MAX_CHARS, DISCORD_MAX_CHARS] {
            let parts = split_message(&text, max);
            assert!(parts.len() > 1);
            assert!(parts.iter().all(|p| p.chars().count() <= max));
            assert!(parts.iter().all(|p| p.ends_with("line of text")));
        }
        let long = "长".repeat(5000);
        let parts = split_message(&long, 2000);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.chars().count() <= 2000));
    }
}
