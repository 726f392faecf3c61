//! Discord: our markdown with tables as code blocks, and an embed for the memory bill
//! and the price.

use crate::advisor::reply::{gb, money_range, Block, Reply};
use crate::advisor::Answer;

/// Discord's message limit, characters.
pub const DISCORD_MAX_CHARS: usize = 2000;

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
