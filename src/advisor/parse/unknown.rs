//! Model names the catalog does not know: a vendor's model family followed by a version
//! or variant ("Kimi K2.5", "GLM-6", "Qwen3.6-27B", "ERNIE 4.5"), read only when no
//! catalog alias matched. The answer then says the model is not known (and, with a size
//! in the question, answers for a generic model of that size, saying so) instead of
//! reading the question as something else. Reads; decides nothing.

use crate::advisor::workload::Asked;
use regex::Regex;
use std::sync::OnceLock;

/// Model families of the vendors customers ask about (their own spellings on the model
/// hubs, and the Chinese names they go by). A family alone, without a version, is a
/// name too: "deepseek 要几张卡" does not say which DeepSeek.
const FAMILIES: &[&str] = &[
    "qwen",
    "千问",
    "通义千问",
    "llama",
    "羊驼",
    "deepseek",
    "深度求索",
    "chatglm",
    "glm",
    "智谱",
    "kimi",
    "moonshot",
    "月之暗面",
    "gpt-oss",
    "gpt",
    "mistral",
    "mixtral",
    "ministral",
    "codestral",
    "devstral",
    "magistral",
    "gemma",
    "phi",
    "minimax",
    "hunyuan",
    "混元",
    "ernie",
    "文心",
    "baichuan",
    "百川",
    "yi",
    "internlm",
    "书生",
    "doubao",
    "豆包",
    "seed-oss",
    "阶跃",
    "flux",
    "stable-diffusion",
    "sd3",
    "sd3.5",
    "wan",
    "万相",
    "通义万相",
    "cogvideox",
    "cogvideo",
    "hunyuanvideo",
    "olmo",
    "falcon",
    "command-r",
    "granite",
    "nemotron",
    "grok",
    "longcat",
    "openchat",
    "vicuna",
    "starcoder",
    "codellama",
    "qwq",
    "telechat",
    "skywork",
    "天工",
    "xverse",
    "minicpm",
];

/// Words that continue a model name after a space ("llama 4 scout instruct").
const SUFFIXES: &[&str] = &[
    "instruct", "chat", "base", "scout", "maverick", "air", "flash", "pro", "max", "mini", "turbo",
    "coder", "vl", "next", "thinking", "dev", "schnell", "large", "small", "medium", "nano",
    "lite", "plus", "ultra", "exp", "preview", "it", "omni", "math", "distill",
];

fn family_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let mut f: Vec<&str> = FAMILIES.to_vec();
        f.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let alts = f
            .iter()
            .map(|s| regex::escape(s).replace(r"\-", r"[\s\-_]?"))
            .collect::<Vec<_>>()
            .join("|");
        Regex::new(&format!("(?:{alts})")).expect("escaped names compile")
    })
}

/// The model name of the question when no catalog alias matched (`a.model` unset).
pub fn not_in_catalog(text: &str, raw: &str, a: &Asked) -> Option<String> {
    a.model.is_none().then(|| model_name(text, raw)).flatten()
}

/// A model name in `text` (lowercase, normalised) that is not the catalog's, in the
/// spelling of `raw` (the question as written) where it can be found there; `None` when
/// the question names none. Call only when no catalog model matched.
pub fn model_name(text: &str, raw: &str) -> Option<String> {
    let name = name_in(text)?;
    let lower = raw.to_lowercase();
    // Lowercasing keeps byte offsets for ASCII names; otherwise keep the normalised one.
    Some(match lower.find(&name) {
        Some(i) if lower.len() == raw.len() && raw.is_char_boundary(i + name.len()) => {
            raw[i..i + name.len()].to_string()
        }
        _ => name,
    })
}

/// Tools named after a model family: the word after the family, with or without a
/// separator (llama.cpp, LLaMA-Factory, LlamaIndex, llama-stack, Qwen-Agent).
const TOOLS: &[&str] = &["cpp", "factory", "index", "stack", "agent"];

fn is_tool(after_family: &str) -> bool {
    let rest = after_family.trim_start_matches([' ', '-', '_', '.']);
    TOOLS.iter().any(|t| {
        rest.strip_prefix(t)
            .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric()))
    })
}

/// Words that put a reference in front of them ("工单 YI-306", "Ticket GLM-595", "Ref:
/// BELLE-311"): what follows is an id, not a model.
const REFERENCES: &[&str] = &[
    "工单",
    "工单号",
    "单号",
    "编号",
    "合同",
    "合同号",
    "ticket",
    "ref",
    "case",
    "job id",
    "issue",
];

fn after_reference(before: &str) -> bool {
    let t = before.trim_end_matches([' ', '#', ':', '：', '.', '-']);
    REFERENCES.iter().any(|r| {
        t.strip_suffix(r)
            .is_some_and(|p| !p.ends_with(|c: char| c.is_ascii_alphanumeric()))
    })
}

fn name_in(text: &str) -> Option<String> {
    for m in family_re().find_iter(text) {
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        // "llama.cpp", "LLaMA-Factory", "llama-index", "qwen-agent" are tools, not models.
        if is_tool(&text[m.end()..]) || after_reference(&text[..m.start()]) {
            continue;
        }
        let ascii_family = m.as_str().is_ascii();
        // A family spelled in Latin letters stands as a word ("want", "graphics" are not).
        if ascii_family
            && (before.is_some_and(|c| c.is_ascii_alphanumeric())
                || after.is_some_and(|c| c.is_ascii_alphabetic()))
        {
            continue;
        }
        let mut end = m.end();
        // The version glued or hyphenated to it: "k2.5", "-4.5-air", "3.5-27b".
        let tail = &text[end..];
        let glued = tail
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        end += glued;
        // Further words that belong to the name: a version ("4", "k2"), a variant word.
        loop {
            let rest = &text[end..];
            let spaced = rest.len() - rest.trim_start_matches([' ', '-', '_']).len();
            if spaced == 0 {
                break;
            }
            let word: String = rest[spaced..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            let is_version = word.chars().next().is_some_and(|c| c.is_ascii_digit())
                || (word.len() <= 4 && word.chars().any(|c| c.is_ascii_digit()));
            if word.is_empty() || !(is_version || SUFFIXES.contains(&word.as_str())) {
                break;
            }
            end += spaced + word.len();
        }
        let name = text[m.start()..end]
            .trim_end_matches(['.', '-', '_'])
            .trim();
        if !name.is_empty() {
            return Some(name.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::model_name;

    #[test]
    fn the_name_keeps_the_questions_spelling() {
        let raw = "Kimi K2.5 推理要几张 H100";
        assert_eq!(
            model_name(&raw.to_lowercase(), raw).as_deref(),
            Some("Kimi K2.5")
        );
    }

    #[test]
    fn names_the_catalog_lacks_are_read_as_written() {
        for (q, want) in [
            ("kimi k2.5 推理要几张 h100", Some("kimi k2.5")),
            ("glm-5 要什么卡", Some("glm-5")),
            ("qwen3.5-27b 推理", Some("qwen3.5-27b")),
            ("ernie 4.5 能用 4090 跑吗", Some("ernie 4.5")),
            ("llama 5 scout 要什么卡", Some("llama 5 scout")),
            ("deepseek 要几张卡", Some("deepseek")),
            ("文心4.5 要几张卡", Some("文心4.5")),
            // Words that merely contain a family are not one.
            ("i want to rent a gpu", None),
            // Tools named after a family.
            ("llama-factory 支持昇腾吗", None),
            ("llama.cpp 跑 q4 要多少显存", None),
            ("用 llama_factory 训练", None),
            ("llamaindex 做知识库", None),
            ("qwen-agent 要什么卡", None),
            ("graphics card for 7b", None),
            ("4090 能跑 70b 吗", None),
            // A reference number that starts like a family.
            ("想咨询备案问题 工单 yi-306 · 2024-01-15", None),
            ("ticket glm-595, is nvlink needed?", None),
            ("ref: belle-311 - 2023-04-25", None),
        ] {
            assert_eq!(model_name(q, q).as_deref(), want, "{q}");
        }
    }
}
