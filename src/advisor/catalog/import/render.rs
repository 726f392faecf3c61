//! The `models.toml` entry of an imported architecture, in the file's field order.

use super::arch::Arch;
use std::fmt::Write as _;

/// Billions with the precision the catalog uses (three significant figures and more).
fn billions(n: f64) -> String {
    let b = n / 1e9;
    let digits = if b >= 100.0 {
        1
    } else if b >= 10.0 {
        2
    } else {
        3
    };
    format!("{b:.digits$}")
}

pub(super) fn render(
    id: &str,
    name: &str,
    family: &str,
    aliases: &[String],
    a: &Arch,
    source: &str,
    released: &str,
) -> String {
    let q = |s: &str| format!("{s:?}");
    let aliases = aliases.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
    let mut s = String::new();
    let _ = writeln!(s, "[[model]]");
    let _ = writeln!(s, "id = {}", q(id));
    let _ = writeln!(s, "name = {}", q(name));
    let _ = writeln!(s, "family = {}", q(family));
    let _ = writeln!(s, "kind = \"llm\"");
    let _ = writeln!(s, "aliases = [{aliases}]");
    let _ = writeln!(s, "params_b = {}", billions(a.total));
    let _ = writeln!(s, "active_params_b = {}", billions(a.active));
    let _ = writeln!(s, "layers = {}", a.layers);
    let _ = writeln!(s, "hidden = {}", a.hidden);
    let _ = writeln!(s, "intermediate = {}", a.active_width);
    let _ = writeln!(s, "heads = {}", a.heads);
    let _ = writeln!(s, "kv_heads = {}", a.kv_heads);
    let _ = writeln!(s, "head_dim = {}", a.head_dim);
    let _ = writeln!(s, "vocab = {}", a.vocab);
    let _ = writeln!(s, "tied_embeddings = {}", a.tied);
    let _ = writeln!(s, "native_precision = {}", q(a.native));
    let _ = writeln!(s, "max_context = {}", a.max_context);
    let form = if a.mla_latent > 0 {
        "mla"
    } else if a.kv_heads == a.heads {
        "mha"
    } else if a.kv_heads == 1 {
        "mqa"
    } else {
        "gqa"
    };
    let _ = writeln!(s, "kv_form = {}", q(form));
    let _ = writeln!(s, "kv_latent_dim = {}", a.mla_latent);
    let _ = writeln!(s, "kv_copies = 1");
    let _ = writeln!(s, "experts = {}", a.experts);
    let _ = writeln!(s, "experts_per_token = {}", a.experts_per_token);
    let _ = writeln!(s, "diffusion_activation_gb = 0.0");
    if a.experts > 0 {
        let _ = writeln!(s, "expert_params_b = {}", billions(a.experts_total));
        if a.shared_experts > 0 {
            let _ = writeln!(s, "shared_experts = {}", a.shared_experts);
        }
    }
    if a.sliding_layers > 0 {
        let _ = writeln!(s, "sliding_layers = {}", a.sliding_layers);
        let _ = writeln!(s, "sliding_window = {}", a.sliding_window);
    }
    if a.linear_layers > 0 {
        let _ = writeln!(s, "linear_layers = {}", a.linear_layers);
        let _ = writeln!(s, "linear_state_mb = {:.1}", a.linear_state_bytes / 1e6);
    }
    if a.cross_layers > 0 {
        let _ = writeln!(s, "cross_layers = {}", a.cross_layers);
        let _ = writeln!(s, "cross_state_mb = {:.1}", a.cross_state_bytes / 1e6);
    }
    if a.vision > 0.0 {
        let _ = writeln!(s, "vision_params_b = {}", billions(a.vision));
    }
    let _ = writeln!(s, "source = {}", q(source));
    let _ = writeln!(s, "released = {}", q(released));
    s
}
