//! The misses log: every question the bot could not answer, from any channel, as JSON
//! lines `{"channel","question"}` (`GPU_ADVISOR_UNANSWERED_LOG`), and `gpu-advisor
//! report`'s summary of it (or of the server's JSON logs, whose lines with the message
//! "unanswered question" carry the same fields), so the sales team can extend intents/.

use super::Channel;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

/// At most this many characters of a question are kept.
pub const QUESTION_CHARS: usize = 300;
/// The file is rotated (to `FILE.1`, replacing the one before) past this size, so the
/// log holds at most twice this on disk.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Misses waiting for the writer; past this, new ones are dropped and counted.
const QUEUE: usize = 4096;

enum Job {
    Line(String),
    Flush(SyncSender<()>),
}

/// Where misses go: a log line always (user text escaped), and the file when one is
/// configured, written by a thread of its own, off the request path.
pub struct Misses {
    writer: Option<SyncSender<Job>>,
    /// Misses not written because the writer was behind.
    dropped: AtomicU64,
}

impl Misses {
    pub fn new(path: Option<&str>) -> Misses {
        Misses::with_cap(path, MAX_FILE_BYTES)
    }

    /// A log rotated past `max_bytes`.
    pub fn with_cap(path: Option<&str>, max_bytes: u64) -> Misses {
        let writer = path.map(|p| {
            let (tx, rx) = sync_channel(QUEUE);
            let path = PathBuf::from(p);
            std::thread::Builder::new()
                .name("misses-log".into())
                .spawn(move || write_lines(&path, max_bytes, rx))
                .map(|_| tx)
        });
        let writer = match writer {
            Some(Ok(tx)) => Some(tx),
            Some(Err(e)) => {
                tracing::warn!(error = %e, "unanswered log disabled: no writer thread");
                None
            }
            None => None,
        };
        Misses {
            writer,
            dropped: AtomicU64::new(0),
        }
    }

    /// Records a question the bot did not understand.
    pub fn record(&self, channel: Channel, question: &str) {
        let q: String = question.chars().take(QUESTION_CHARS).collect();
        tracing::info!(channel = channel.id(), question = %printable(&q), "unanswered question");
        let Some(tx) = &self.writer else {
            return;
        };
        let line = serde_json::json!({"channel": channel.id(), "question": q}).to_string();
        if let Err(TrySendError::Full(_)) = tx.try_send(Job::Line(line)) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `gpu_advisor_unanswered_log_dropped_total` in the Prometheus text format.
    pub fn render_metrics(&self) -> String {
        format!(
            "# HELP gpu_advisor_unanswered_log_dropped_total Unanswered questions not written to the log because its writer was behind.\n\
             # TYPE gpu_advisor_unanswered_log_dropped_total counter\n\
             gpu_advisor_unanswered_log_dropped_total {}\n",
            self.dropped.load(Ordering::Relaxed)
        )
    }

    /// Waits until every miss recorded so far is in the file.
    pub fn flush(&self) {
        if let Some(tx) = &self.writer {
            let (done, wait) = sync_channel(1);
            if tx.send(Job::Flush(done)).is_ok() {
                let _ = wait.recv();
            }
        }
    }
}

/// The writer thread: appends each line, rotating the file past `max_bytes`; ends when
/// the `Misses` is dropped.
fn write_lines(path: &Path, max_bytes: u64, jobs: Receiver<Job>) {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    let mut file = open();
    for job in jobs {
        let line = match job {
            Job::Line(l) => l,
            Job::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if size + line.len() as u64 + 1 > max_bytes && size > 0 {
            let mut old = path.as_os_str().to_owned();
            old.push(".1");
            if let Err(e) = std::fs::rename(path, &old) {
                tracing::warn!(error = %e, "cannot rotate the unanswered log");
            }
            file = open();
        }
        let res = match &mut file {
            Ok(f) => writeln!(f, "{line}"),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        };
        if let Err(e) = res {
            tracing::warn!(error = %e, path = %path.display(), "cannot append to the unanswered log");
            file = open();
        }
    }
}

/// `s` safe for a terminal and a line-based log: newlines, control characters, escape
/// sequences and bidirectional overrides become visible escapes (`\n`, `\u{1b}`).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Counts questions (normalised: lowercase, whitespace collapsed, control characters
/// escaped) in `text`, most frequent first.
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
            // Printable: the report goes to an operator's terminal.
            let norm =
                printable(&q.split_whitespace().collect::<Vec<_>>().join(" ")).to_lowercase();
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

    #[test]
    fn user_text_cannot_forge_lines_or_reach_the_terminal_raw() {
        assert_eq!(printable("4090 能跑 70B 吗"), "4090 能跑 70B 吗");
        assert_eq!(
            printable("hi\nINFO forged line\u{1b}]0;title\u{7}\u{202e}"),
            "hi\\nINFO forged line\\u{1b}]0;title\\u{7}\\u{202e}"
        );
        let log = r#"{"channel":"telegram","question":"x\u001b[2J\u001b]8;;http://e/\u0007y"}"#;
        let s = summarise(log);
        assert_eq!(s[0].0, "x\\u{1b}[2j\\u{1b}]8;;http://e/\\u{7}y");
        assert!(!s[0].0.chars().any(char::is_control));
    }

    #[test]
    fn the_file_is_written_off_the_request_path_and_rotated() {
        let dir = std::env::temp_dir().join(format!("gpu-advisor-rotate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("misses.jsonl");
        let m = Misses::with_cap(path.to_str(), 2_000);
        for i in 0..100 {
            m.record(
                Channel::Http,
                &format!("question number {i} that nobody understood"),
            );
        }
        m.flush();
        let now = std::fs::metadata(&path).expect("file").len();
        let old = std::fs::metadata(dir.join("misses.jsonl.1"))
            .expect("rotated")
            .len();
        assert!(now <= 2_000 && old <= 2_000, "{now} and {old} bytes");
        let last = std::fs::read_to_string(&path).expect("read");
        assert!(last.contains("question number 99"), "the newest are kept");
        assert!(m
            .render_metrics()
            .contains("gpu_advisor_unanswered_log_dropped_total 0\n"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
