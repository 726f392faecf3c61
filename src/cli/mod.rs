//! The commands: `ask` (the reply, its JSON, a JSONL conversation), `check`, `eval`,
//! `report`, and `serve`'s settings and logs before `server::run` takes over.

/// `println!` to stdout that stops quietly when the reader has gone ("check | head -1"):
/// a closed pipe is no error of ours, and never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
pub(crate) use outln;

pub mod eval;
pub mod model;

use gpu_advisor::advisor::{Advisor, State};
use gpu_advisor::config::{LogFormat, Settings};
use gpu_advisor::server::{self, DataDirs, Services};
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn ask(advisor: &Advisor, json: bool, jsonl: bool, question: &str) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if jsonl {
        let mut state = State::default();
        let stdin = std::io::stdin();
        let mut buf = Vec::new();
        let mut input = stdin.lock();
        loop {
            buf.clear();
            match input.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    eprintln!("error: reading stdin: {e}");
                    return ExitCode::FAILURE;
                }
            }
            let line = String::from_utf8_lossy(&buf);
            let line = line.trim_end_matches(['\n', '\r']);
            let (answer, next) = advisor.answer(line, &state);
            state = next;
            let s = serde_json::to_string(&answer).expect("answers serialise");
            if writeln!(out, "{s}").is_err() {
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    let (answer, _) = advisor.answer(question, &State::default());
    let text = if json {
        serde_json::to_string(&answer).expect("answers serialise")
    } else {
        answer.reply()
    };
    if writeln!(out, "{text}").is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

pub fn check(catalog: &Path, intents: &Path, advisor: &Advisor) -> ExitCode {
    let c = &advisor.catalog;
    outln!(
        "ok: {} GPUs, {} offers, {} models, {} topics; {} intent entries (catalog {}, intents {})",
        c.gpus.len(),
        c.offers.len(),
        c.models.len(),
        c.topics.len(),
        advisor.parser.lexicon().len(),
        if catalog.is_dir() {
            catalog.display().to_string()
        } else {
            "embedded".into()
        },
        if intents.is_dir() {
            intents.display().to_string()
        } else {
            "embedded".into()
        },
    );
    // How well the topics' example questions stand for each other: an example that
    // routes elsewhere with itself left out wants a sibling (BENCHMARKS.md).
    let loo = advisor.parser.topic_leave_one_out(c);
    outln!(
        "topic examples: {} of {} reach their topic with themselves left out",
        loo.iter().filter(|l| l.hit()).count(),
        loo.len()
    );
    ExitCode::SUCCESS
}

/// `report`: the most frequent unanswered questions, then the same grouped by what each
/// lacked (a model, a number no slot read, a topic, with the nearest topics), so the
/// sales team sees what to add to the catalog or to intents/.
pub fn report(advisor: &Advisor, file: &Path, top: usize) -> ExitCode {
    use gpu_advisor::advisor::parse::Missing;
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let list = gpu_advisor::app::misses::summarise(&text);
            outln!("{} distinct unanswered questions", list.len());
            for (q, n) in list.iter().take(top) {
                outln!("{n:6}  {q}");
            }
            let mut groups: Vec<(&str, Vec<(String, usize)>)> = vec![
                ("model", Vec::new()),
                ("number", Vec::new()),
                ("topic", Vec::new()),
            ];
            for (q, n) in &list {
                let (g, note) = match advisor.parser.missing(q) {
                    Missing::Model(m) if m.is_empty() => (0, String::new()),
                    Missing::Model(m) => (0, format!("  [{m}]")),
                    Missing::Number => (1, String::new()),
                    Missing::Topic(near) if near.is_empty() => (2, "  [near: none]".into()),
                    Missing::Topic(near) => {
                        let near: Vec<String> = near
                            .iter()
                            .map(|(id, s)| format!("{id} {:.0}%", s * 100.0))
                            .collect();
                        (2, format!("  [near: {}]", near.join(", ")))
                    }
                };
                groups[g].1.push((format!("{q}{note}"), *n));
            }
            for (name, items) in groups {
                let total: usize = items.iter().map(|(_, n)| n).sum();
                outln!(
                    "\nmissing {name}: {total} questions, {} distinct",
                    items.len()
                );
                for (q, n) in items.into_iter().take(top) {
                    outln!("{n:6}  {q}");
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            ExitCode::FAILURE
        }
    }
}

/// `serve`: the settings (defaults → `--config` file → environment), the logs, then
/// the server until shutdown.
pub fn serve(
    advisor: Advisor,
    config: Option<&Path>,
    log_format: Option<&str>,
    dirs: DataDirs,
) -> ExitCode {
    let file = match config.map(std::fs::read_to_string).transpose() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: --config: {e}");
            return ExitCode::from(2);
        }
    };
    let env = |k: &str| match (k, log_format) {
        ("GPU_ADVISOR_LOG_FORMAT", Some(f)) => Some(f.to_string()),
        _ => std::env::var(k).ok(),
    };
    let settings = match Settings::load(file.as_deref(), &env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match settings.log_format {
        LogFormat::Json => tracing_subscriber::fmt().json().with_target(false).init(),
        LogFormat::Text => tracing_subscriber::fmt()
            .with_target(false)
            // Colour codes only on a terminal, not in log files.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .init(),
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&settings.listen).await?;
        let services = Services::build(advisor, settings).map_err(std::io::Error::other)?;
        server::run(listener, services, dirs).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
