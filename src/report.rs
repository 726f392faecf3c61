//! `gpu-advisor report`: the most frequent questions the bot could not answer, from the
//! unanswered log (JSON lines `{"channel","question"}`) or from the server's JSON logs
//! (lines whose message is "unanswered question"), so the sales team can extend intents/.

use std::collections::HashMap;

/// Counts questions (normalised: lowercase, whitespace collapsed) in `text`, most
/// frequent first.
pub fn summarise(text: &str) -> Vec<(String, usize)> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let q = v["question"].as_str().or_else(|| {
            (v["fields"]["message"].as_str() == Some("unanswered question"))
                .then(|| v["fields"]["question"].as_str())
                .flatten()
        });
        if let Some(q) = q {
            let norm = q
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            *counts.entry(norm).or_insert(0) += 1;
        }
    }
    let mut list: Vec<(String, usize)> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_both_formats() {
        let text = r#"{"channel":"http","question":"明天 放假吗"}
{"channel":"wecom","question":"明天  放假吗"}
not json
{"timestamp":"t","level":"INFO","fields":{"message":"unanswered question","channel":"http","question":"who are you"}}
{"fields":{"message":"handled","question":"x"}}"#;
        let s = summarise(text);
        assert_eq!(s[0], ("明天 放假吗".to_string(), 2));
        assert_eq!(s[1], ("who are you".to_string(), 1));
        assert_eq!(s.len(), 2);
    }
}
