//! The neutral reply: a list of blocks that each adapter renders (markdown here;
//! Telegram HTML, Discord embeds and WeCom markdown in their adapters), plus the number
//! formatting every reply shares. Presentation only: nothing here decides what a reply
//! says or looks anything up.

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

    /// Whether the markdown would be empty: no block, or only blank text (a title,
    /// bullets or a table always show their markup).
    pub fn is_blank(&self) -> bool {
        self.blocks
            .iter()
            .all(|b| matches!(b, Block::Text(t) if t.trim().is_empty()))
    }

    /// Markdown as the CLI, `/v1/ask` and the console show it.
    pub fn markdown(&self) -> String {
        // Sized once: the text of every block plus its markup (a reply is a few KB).
        let text: usize = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Title(t) | Block::Text(t) => t.len() + 6,
                Block::Bullets(items) => items.iter().map(|i| i.len() + 3).sum(),
                Block::Table { head, rows } => std::iter::once(head)
                    .chain(rows)
                    .map(|r| r.iter().map(|c| c.len() + 4).sum::<usize>() + 6)
                    .sum(),
            })
            .sum();
        let mut out = String::with_capacity(text + 16);
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
                    table_row(&mut out, head);
                    out.push('|');
                    for _ in head {
                        out.push_str("---|");
                    }
                    out.push('\n');
                    for r in rows {
                        table_row(&mut out, r);
                    }
                }
            }
        }
        let kept = out.trim_end().len();
        if out[..kept].chars().count() <= MAX_REPLY_CHARS {
            out.truncate(kept);
            return out;
        }
        cut_lines(&out[..kept], MAX_REPLY_CHARS)
    }
}

fn table_row(out: &mut String, cells: &[String]) {
    out.push('|');
    for c in cells {
        out.push(' ');
        out.push_str(c);
        out.push_str(" |");
    }
    out.push('\n');
}

/// `v` with `decimals` places, rounded half away from zero as [`super::contract::round1`]
/// rounds the JSON figures, so the text and the JSON of one answer always agree. Formats
/// through integers: exact decimal expansion of the binary value (what `{:.1}` does) is
/// needless here and the slowest part of a reply.
pub struct Fixed(pub f64, pub usize);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Fixed(v, d) = *self;
        let scale = 10i64.pow(d.min(6) as u32);
        if d > 6 || !v.is_finite() || v.abs() * scale as f64 >= 9e15 {
            return write!(f, "{v:.d$}");
        }
        let n = (v * scale as f64).round() as i64;
        let sign = if n < 0 { "-" } else { "" };
        let (int, frac) = (
            n.unsigned_abs() / scale as u64,
            n.unsigned_abs() % scale as u64,
        );
        if d == 0 {
            write!(f, "{sign}{int}")
        } else {
            write!(f, "{sign}{int}.{frac:0d$}")
        }
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

/// A rental period: "3 个月" / "3 months"; under a month in days ("10 天", "10 days"),
/// of 30-day months; else with one decimal ("1.5 个月").
pub fn period(months: f64, lang: Lang) -> String {
    let whole = (months - months.round()).abs() < 0.01;
    if months < 1.0 && !whole {
        let days = (months * 30.0).round().max(1.0);
        match lang {
            Lang::Zh => format!("{days:.0} 天"),
            Lang::En if days == 1.0 => "1 day".to_string(),
            Lang::En => format!("{days:.0} days"),
        }
    } else {
        let n = if whole {
            format!("{months:.0}")
        } else {
            format!("{months:.1}")
        };
        match lang {
            Lang::Zh => format!("{n} 个月"),
            Lang::En if whole && months.round() == 1.0 => "1 month".to_string(),
            Lang::En => format!("{n} months"),
        }
    }
}

/// GB with one decimal.
pub fn gb(v: f64) -> String {
    Fixed(v, 1).to_string()
}

/// Billions of parameters, as model cards write them.
pub fn params(b: f64) -> String {
    if b >= 100.0 {
        format!("{}B", Fixed(b, 0))
    } else if b >= 10.0 {
        format!("{}B", Fixed(b, 1)).replace(".0B", "B")
    } else {
        let s = Fixed(b, 2).to_string();
        format!("{}B", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Hours as "35 h" or "3.2 天" / "3.2 days".
pub fn duration(hours: f64, lang: Lang) -> String {
    let (h, d) = (Fixed(hours, 0), Fixed(hours / 24.0, 1));
    match lang {
        Lang::Zh if hours >= 48.0 => format!("约 {h} 小时（{d} 天）"),
        Lang::Zh => format!("约 {} 小时", Fixed(hours, 1)),
        Lang::En if hours >= 48.0 => format!("about {h} h ({d} days)"),
        Lang::En => format!("about {} h", Fixed(hours, 1)),
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
    fn blank_exactly_when_the_markdown_is_empty() {
        let cases: Vec<Vec<Block>> = vec![
            vec![],
            vec![Block::Text("  ".into())],
            vec![Block::Text(" \n ".into()), Block::Text(String::new())],
            vec![Block::Text("x".into())],
            vec![Block::Title(String::new())],
            vec![Block::Bullets(vec![" ".into()])],
            vec![Block::Table {
                head: vec![],
                rows: vec![],
            }],
            vec![Block::Text(" ".into()), Block::Title("t".into())],
        ];
        for blocks in cases {
            let r = Reply {
                blocks,
                ..Reply::new(Lang::Zh)
            };
            assert_eq!(
                r.is_blank(),
                r.markdown().trim().is_empty(),
                "{:?}",
                r.blocks
            );
        }
    }

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
    fn fixed_rounds_half_away_from_zero_like_the_json() {
        assert_eq!(Fixed(0.25, 1).to_string(), "0.3");
        assert_eq!(Fixed(-0.25, 1).to_string(), "-0.3");
        assert_eq!(Fixed(145.84, 1).to_string(), "145.8");
        assert_eq!(Fixed(2.0, 2).to_string(), "2.00");
        assert_eq!(Fixed(0.04, 1).to_string(), "0.0");
        assert_eq!(Fixed(1e300, 1).to_string(), format!("{:.1}", 1e300));
        assert_eq!(Fixed(f64::NAN, 1).to_string(), "NaN");
        for v in [0.0, 0.05, 1.15, 23.95, 79.99, 1234.5678, 1e9 + 0.45] {
            let json = crate::advisor::contract::round1(v);
            assert_eq!(
                Fixed(v, 1).to_string().parse::<f64>().ok(),
                Some(json),
                "{v}"
            );
        }
    }

    #[test]
    fn cut_at_lines() {
        let s = "aaa\nbbb\nccc";
        assert_eq!(cut_lines(s, 8), "aaa\nbbb");
        assert_eq!(cut_lines(s, 100), s);
    }
}
