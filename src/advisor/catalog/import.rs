//! A Hugging Face `config.json` → a `models.toml` entry: the architecture read field by
//! field, total and active parameters counted from it (dense, MoE with shared experts,
//! MLA, sliding-window and chunked-local layers, linear-attention layers, a vision
//! encoder), and the fields it could not derive named. Pure: the caller reads the file.
//!
//! Parameter counts are the weight matrices of the transformer (norms and biases are a
//! few millionths of the total and left out), as the model cards count them.

use serde_json::Value;

mod arch;
mod render;

/// What the command line adds to the config.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub id: Option<String>,
    pub name: Option<String>,
    pub aliases: Vec<String>,
    pub source: Option<String>,
    /// Month the weights were published, "YYYY-MM".
    pub released: Option<String>,
}

/// The entry and what the config did not say.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub id: String,
    pub params_b: f64,
    pub active_params_b: f64,
    pub toml: String,
    /// Fields left at a guess or zero because the config does not carry them.
    pub missing: Vec<String>,
}

/// Reads a config and counts its parameters. `Err` names what makes it unusable.
pub fn import(config: &str, opts: &ImportOptions) -> Result<Imported, String> {
    let root: Value = serde_json::from_str(config).map_err(|e| format!("not JSON: {e}"))?;
    if !root.is_object() {
        return Err("config.json must be a JSON object".into());
    }
    // Multimodal configs keep the language model under `text_config` (Llama 4, Gemma 3,
    // Qwen2.5-VL since transformers 4.5x) or `llm_config`.
    let text = ["text_config", "llm_config", "language_config"]
        .iter()
        .find_map(|k| root.get(*k).filter(|v| v.is_object()))
        .unwrap_or(&root);
    let mut missing = Vec::new();
    let a = arch::read_arch(&root, text, &mut missing)?;
    let name = opts
        .name
        .clone()
        .or_else(|| {
            root.get("_name_or_path")
                .and_then(|v| v.as_str())
                .map(|s| s.rsplit('/').next().unwrap_or(s).to_string())
        })
        .filter(|s| !s.is_empty());
    let id = opts
        .id
        .clone()
        .or_else(|| name.as_ref().map(|n| slug(n)))
        .ok_or("no model id: pass --id (the config has no _name_or_path)")?;
    let name = name.unwrap_or_else(|| id.clone());
    let family = root
        .get("model_type")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    if family.is_empty() {
        missing.push("family (no model_type)".into());
    }
    let mut aliases: Vec<String> = vec![id.clone()];
    for al in &opts.aliases {
        let al = al.to_lowercase();
        if !aliases.contains(&al) {
            aliases.push(al);
        }
    }
    let source = opts.source.clone().unwrap_or_else(|| {
        missing.push("source (pass --source with the config.json URL and revision)".into());
        String::new()
    });
    let released = opts.released.clone().unwrap_or_else(|| {
        missing.push("released (pass --released with the model card's YYYY-MM)".into());
        String::new()
    });
    let toml = render::render(&id, &name, &family, &aliases, &a, &source, &released);
    Ok(Imported {
        id,
        params_b: a.total,
        active_params_b: a.active,
        toml,
        missing,
    })
}

fn slug(name: &str) -> String {
    let mut s: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests;
