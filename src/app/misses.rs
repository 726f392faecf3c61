//! The misses log: every question the bot could not answer, from any channel, as JSON
//! lines `{"channel","question"}` (`GPU_ADVISOR_UNANSWERED_LOG`), and `gpu-advisor
//! report`'s summary of it (or of the server's JSON logs, whose lines with the message
//! "unanswered question" carry the same fields), so the sales team can extend intents/.

use super::Channel;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// At most this many characters of a question are kept.
pub const QUESTION_CHARS: usize = 300;

/// Where misses are written: the log line always, the file when one is configured.
pub struct Misses {
    file: Option<Mutex<PathBuf>>,
}

impl Misses {
    pub fn new(path: Option<&str>) -> Misses {
        Misses {
            file: path.map(|p| Mutex::new(PathBuf::from(p))),
        }
    }

    /// Records a question the bot did not understand.
    pub fn record(&self, channel: Channel, question: &str) {
        let q: String = question.chars().take(QUESTION_CHARS).collect();
        tracing::info!(channel = channel.id(), question = %q, "unanswered question");
        let Some(file) = &self.file else {
            return;
        };
        let line = serde_json::json!({"channel": channel.id(), "question": q}).to_string();
        // One writer at a time, so concurrent misses never interleave within a line.
        let path = file.lock().unwrap_or_else(|e| e.into_inner());
        let res = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&*path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = res {
            tracing::warn!(error = %e, path = %path.display(), "cannot append to the unanswered log");
        }
    }
}

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
