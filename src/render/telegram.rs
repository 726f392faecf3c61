//! Telegram HTML: user text and catalog text are escaped, so neither can inject markup;
//! only our own `**bold**` becomes `<b>`.

use crate::advisor::reply::{Block, Reply};

/// Telegram's message limit, characters.
pub const TELEGRAM_MAX_CHARS: usize = 4096;

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
}
