//! The `gpu-advisor` binary: parse the command line, load the data, run the command.

use clap::{Parser, Subcommand};
use gpu_advisor::advisor::{Advisor, State};
use gpu_advisor::config::{LogFormat, Settings};
use gpu_advisor::{data, http};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

mod eval;

/// mimalloc instead of glibc's malloc: a reply allocates and frees a few hundred small
/// strings, and glibc's malloc, free and realloc were a fifth of the server's time.
/// Transparent huge pages are off for its memory (`no_thp`): with them, its eagerly
/// committed arenas doubled the idle RSS (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Log format of `serve`: text or json (overrides GPU_ADVISOR_LOG_FORMAT).
    #[arg(long, global = true, value_parser = ["text", "json"])]
    log_format: Option<String>,
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
    /// Prints the Discord slash-command definitions (JSON) built from the catalog, for
    /// registering them when only the interactions endpoint runs.
    DiscordCommands,
    /// Summarises the most frequent unanswered questions of an unanswered log or JSON server log.
    Report {
        file: PathBuf,
        /// How many to show.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
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
        Command::DiscordCommands => {
            println!(
                "{:#}",
                gpu_advisor::discord::command_definitions(&advisor.catalog)
            );
            ExitCode::SUCCESS
        }
        Command::Eval { file } => eval::run(&advisor, file),
        Command::Serve => serve(advisor, &cli),
        Command::Report { file, top } => report(file, *top),
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

fn report(file: &std::path::Path, top: usize) -> ExitCode {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let list = gpu_advisor::report::summarise(&text);
            println!("{} distinct unanswered questions", list.len());
            for (q, n) in list.into_iter().take(top) {
                println!("{n:6}  {q}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            ExitCode::FAILURE
        }
    }
}

fn serve(advisor: Advisor, cli: &Cli) -> ExitCode {
    let log_format = cli.log_format.as_deref();
    let file = match cli
        .config
        .as_deref()
        .map(std::fs::read_to_string)
        .transpose()
    {
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
        let addr = listener.local_addr()?;
        tracing::info!(%addr, "HTTP server and console listening");
        if settings.ask_is_open() {
            tracing::warn!(
                "/v1/ask has no credentials configured: it answers callers on 127.0.0.1 only"
            );
        }
        tracing::info!(
            wecom = settings.wecom.is_some(),
            telegram = settings.telegram.is_some(),
            discord = settings.discord.is_some(),
            robot = settings.wecom_robot_webhook_url.is_some(),
            "adapters"
        );
        let poll = Duration::from_secs(settings.reload_poll_secs);
        let app = http::App::new(advisor, settings).map_err(std::io::Error::other)?;
        let reloader = gpu_advisor::live::Reloader {
            catalog_dir: cli.catalog.clone(),
            intents_dir: cli.intents.clone(),
            live: std::sync::Arc::clone(&app.advisor),
            metrics: std::sync::Arc::clone(&app.metrics),
        };
        tracing::info!(
            catalog = %cli.catalog.display(),
            intents = %cli.intents.display(),
            poll_secs = poll.as_secs(),
            "data reload on SIGHUP and file change"
        );
        // One shutdown signal, watched by every part that must stop cleanly.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        });
        let stopped = move || {
            let mut rx = stop_rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        tokio::spawn(reloader.run(poll, stopped()));
        // Adapters with credentials: their webhook routes join the HTTP server.
        let mut router = http::router(std::sync::Arc::clone(&app));
        let mut polling = None;
        if app.settings.telegram.is_some() {
            match gpu_advisor::telegram::start(std::sync::Arc::clone(&app), stopped()).await {
                Ok(gpu_advisor::telegram::Started::Webhook(r)) => router = router.merge(r),
                Ok(gpu_advisor::telegram::Started::Polling(task)) => polling = Some(task),
                Err(e) => tracing::error!(error = %e, "telegram adapter not started"),
            }
        }
        if app.settings.discord.is_some() {
            match gpu_advisor::discord::start(std::sync::Arc::clone(&app), stopped()).await {
                Ok(Some(r)) => router = router.merge(r),
                Ok(None) => {}
                Err(e) => return Err(std::io::Error::other(e)),
            }
        }
        // After the signal: no new connections, in-flight requests finish, and the poller
        // finishes the update in hand and saves its offset, all within SHUTDOWN_GRACE (the
        // process exits inside Kubernetes' and systemd's default stop timeouts).
        let server = http::serve_router(listener, router, stopped());
        let signalled = stopped();
        let deadline = async move {
            signalled.await;
            tokio::time::Instant::now() + SHUTDOWN_GRACE
        };
        tokio::pin!(server, deadline);
        let (served, until) = tokio::select! {
            r = &mut server => (r, tokio::time::Instant::now() + Duration::from_secs(1)),
            until = &mut deadline => {
                match tokio::time::timeout_at(until, &mut server).await {
                    Ok(r) => (r, until),
                    Err(_) => {
                        tracing::warn!("requests still running at the shutdown deadline; closing");
                        (Ok(()), until)
                    }
                }
            }
        };
        if let Some(task) = polling {
            if tokio::time::timeout_at(until, task).await.is_err() {
                tracing::warn!("telegram polling did not stop in time");
            }
        }
        served
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How long shutdown waits for the Telegram poller after the HTTP server has drained.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(9);

/// Resolves on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
