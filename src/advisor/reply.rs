//! The neutral reply: a list of blocks that each adapter renders (markdown here;
//! Telegram HTML, Discord embeds and WeCom markdown in their adapters), plus the number
//! formatting every reply shares.

use super::catalog::Range;
use super::parse::Lang;

/// Replies are cut to this many characters at a line boundary (group chats; Telegram's
/// message limit is 4096).
pub const MAX_REPLY_CHARS: usize = 4000;

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A bold lead line.
    Title(String),
    /// A paragraph; may hold **bold** spans written by us, never user text.
    Text(String),
    Bullets(Vec<String>),
    Table {
        head: Vec<String>,
        rows: Vec<Vec<String>>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub lang: Lang,
    pub blocks: Vec<Block>,
}

impl Reply {
    pub fn new(lang: Lang) -> Reply {
        Reply {
            lang,
            blocks: Vec::new(),
        }
    }
    pub fn title(&mut self, s: impl Into<String>) {
        self.blocks.push(Block::Title(s.into()));
    }
    pub fn text(&mut self, s: impl Into<String>) {
        self.blocks.push(Block::Text(s.into()));
    }
    pub fn bullets(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::Bullets(items));
        }
    }
    pub fn table(&mut self, head: Vec<String>, rows: Vec<Vec<String>>) {
        self.blocks.push(Block::Table { head, rows });
    }

    /// Markdown as the CLI, `/v1/ask` and the console show it.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            if !out.is_empty() {
                out.push('\n');
            }
            match b {
                Block::Title(t) => {
                    out.push_str("**");
                    out.push_str(t);
                    out.push_str("**\n");
                }
                Block::Text(t) => {
                    out.push_str(t);
                    out.push('\n');
                }
                Block::Bullets(items) => {
                    for i in items {
                        out.push_str("- ");
                        out.push_str(i);
                        out.push('\n');
                    }
                }
                Block::Table { head, rows } => {
                    out.push_str(&format!("| {} |\n", head.join(" | ")));
                    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
                    for r in rows {
                        out.push_str(&format!("| {} |\n", r.join(" | ")));
                    }
                }
            }
        }
        cut_lines(out.trim_end(), MAX_REPLY_CHARS)
    }
}

/// Cuts text to at most `max` characters at a line boundary.
pub fn cut_lines(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut n = 0;
    for line in s.split_inclusive('\n') {
        let len = line.chars().count();
        if n + len > max {
            break;
        }
        out.push_str(line);
        n += len;
    }
    if out.is_empty() {
        out = s.chars().take(max).collect();
    }
    out.trim_end().to_string()
}

/// `¥2,800` with thousands separators; no decimals at or above 100.
pub fn money(v: f64) -> String {
    let rounded = if v >= 100.0 {
        v.round()
    } else {
        (v * 100.0).round() / 100.0
    };
    let int = rounded.trunc() as i64;
    let frac = rounded - int as f64;
    let digits = int.abs().to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if frac.abs() > 1e-9 {
        format!("¥{grouped}.{:02}", (frac * 100.0).round() as i64)
    } else {
        format!("¥{grouped}")
    }
}

/// A price range: `¥2,800` or `¥2,500–4,000`.
pub fn money_range(r: Range) -> String {
    if (r.max - r.min).abs() < 0.5 {
        money(r.min)
    } else {
        format!("{}–{}", money(r.min), money(r.max).trim_start_matches('¥'))
    }
}

/// GB with one decimal.
pub fn gb(v: f64) -> String {
    format!("{:.1}", v)
}

/// Billions of parameters, as model cards write them.
pub fn params(b: f64) -> String {
    if b >= 100.0 {
        format!("{:.0}B", b)
    } else if b >= 10.0 {
        format!("{:.1}B", b).replace(".0B", "B")
    } else {
        let s = format!("{:.2}", b);
        format!("{}B", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Hours as "35 h" or "3.2 天" / "3.2 days".
pub fn duration(hours: f64, lang: Lang) -> String {
    match lang {
        Lang::Zh if hours >= 48.0 => format!("约 {:.0} 小时（{:.1} 天）", hours, hours / 24.0),
        Lang::Zh => format!("约 {:.1} 小时", hours),
        Lang::En if hours >= 48.0 => format!("about {:.0} h ({:.1} days)", hours, hours / 24.0),
        Lang::En => format!("about {:.1} h", hours),
    }
}

pub fn t<'a>(lang: Lang, zh: &'a str, en: &'a str) -> &'a str {
    match lang {
        Lang::Zh => zh,
        Lang::En => en,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_formats() {
        assert_eq!(money(2800.0), "¥2,800");
        assert_eq!(money(120000.0), "¥120,000");
        assert_eq!(money(210.0), "¥210");
        assert_eq!(money(16.67), "¥16.67");
        assert_eq!(
            money_range(Range {
                min: 2500.0,
                max: 4000.0
            }),
            "¥2,500–4,000"
        );
    }

    #[test]
    fn params_format() {
        assert_eq!(params(14.17), "14.2B");
        assert_eq!(params(7.0), "7B");
        assert_eq!(params(1.84), "1.84B");
        assert_eq!(params(405.9), "406B");
        assert_eq!(params(70.0), "70B");
    }

    #[test]
    fn cut_at_lines() {
        let s = "aaa\nbbb\nccc";
        assert_eq!(cut_lines(s, 8), "aaa\nbbb");
        assert_eq!(cut_lines(s, 100), s);
    }
}
