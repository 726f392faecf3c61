//! WeCom text: a passive reply has no markdown, so bold marks go and tables become lines.

use crate::advisor::reply::{Block, Reply};

/// WeCom text: no markdown in a passive reply, so bold marks go and tables become lines.
pub fn plain_text(reply: &Reply) -> String {
    let mut out = String::new();
    for b in &reply.blocks {
        match b {
            Block::Title(t) | Block::Text(t) => {
                out.push_str(&t.replace("**", ""));
                out.push('\n');
            }
            Block::Bullets(items) => {
                for i in items {
                    out.push_str("· ");
                    out.push_str(&i.replace("**", ""));
                    out.push('\n');
                }
            }
            Block::Table { head, rows } => {
                out.push_str(&head.join(" | "));
                out.push('\n');
                for r in rows {
                    out.push_str(&r.join(" | "));
                    out.push('\n');
                }
            }
        }
    }
    out.trim_end().to_string()
}
