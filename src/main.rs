//! The `gpu-advisor` binary: parse the command line, load the data, run the command.

use clap::{Parser, Subcommand};
use gpu_advisor::advisor::{Advisor, State};
use gpu_advisor::{data, http};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod eval;

#[derive(Parser)]
#[command(
    name = "gpu-advisor",
    version,
    about = "Answers GPU-rental questions for AI workloads"
)]
struct Cli {
    /// Catalog directory (embedded defaults when absent).
    #[arg(long, global = true, default_value = "./catalog")]
    catalog: PathBuf,
    /// Intents directory (embedded defaults when absent).
    #[arg(long, global = true, default_value = "./intents")]
    intents: PathBuf,
    /// Optional TOML configuration file.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prints the reply a chat user would get.
    Ask {
        /// One JSON object (CONTRACT.md §2) instead of the text reply.
        #[arg(long)]
        json: bool,
        /// Reads questions from stdin, one per line, as one conversation; prints one JSON line each.
        #[arg(long, conflicts_with = "json")]
        jsonl: bool,
        /// The question (all words are joined).
        question: Vec<String>,
    },
    /// Runs the HTTP server and every adapter with credentials.
    Serve,
    /// Loads and validates catalog/ and intents/.
    Check,
    /// Scores an evaluation corpus (JSONL).
    Eval { file: PathBuf },
}

fn load(cli: &Cli) -> Result<Advisor, ExitCode> {
    match data::load(&cli.catalog, &cli.intents) {
        Ok((a, _)) => Ok(a),
        Err(problems) => {
            for p in &problems {
                eprintln!("error: {p}");
            }
            eprintln!("{} problem(s) in the data files", problems.len());
            Err(ExitCode::from(2))
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let advisor = match load(&cli) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match &cli.command {
        Command::Ask {
            json,
            jsonl,
            question,
        } => ask(&advisor, *json, *jsonl, &question.join(" ")),
        Command::Check => check(&cli, &advisor),
        Command::Eval { file } => eval::run(&advisor, file),
        Command::Serve => serve(advisor),
    }
}

fn ask(advisor: &Advisor, json: bool, jsonl: bool, question: &str) -> ExitCode {
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
        answer.reply
    };
    if writeln!(out, "{text}").is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn check(cli: &Cli, advisor: &Advisor) -> ExitCode {
    let c = &advisor.catalog;
    println!(
        "ok: {} GPUs, {} offers, {} models, {} topics; {} intent entries (catalog {}, intents {})",
        c.gpus.len(),
        c.offers.len(),
        c.models.len(),
        c.topics.len(),
        advisor.parser.lexicon().len(),
        if cli.catalog.is_dir() {
            cli.catalog.display().to_string()
        } else {
            "embedded".into()
        },
        if cli.intents.is_dir() {
            cli.intents.display().to_string()
        } else {
            "embedded".into()
        },
    );
    ExitCode::SUCCESS
}

fn serve(advisor: Advisor) -> ExitCode {
    tracing_subscriber::fmt().with_target(false).init();
    let listen = std::env::var("GPU_ADVISOR_LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen).await?;
        tracing::info!(addr = %listener.local_addr()?, "HTTP server listening");
        let app = http::App::new(advisor);
        http::serve(listener, app, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
