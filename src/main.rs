//! The `gpu-advisor` binary: parse the command line, load the data, run the command.
//! `serve` hands over to `server`; the other commands are in `cli`.

use clap::{Parser, Subcommand};
use gpu_advisor::advisor::Advisor;
use gpu_advisor::server::DataDirs;
use gpu_advisor::{data, discord};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

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
        /// The question (all words are joined). Words may start with `-` ("-1B 模型推理"):
        /// only the flags above are flags.
        #[arg(allow_hyphen_values = true)]
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
    /// Adds models to the catalog: `model import PATH/config.json` prints the entry.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    Report {
        file: PathBuf,
        /// How many to show.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Reads a Hugging Face config.json and prints its models.toml entry.
    Import {
        config: PathBuf,
        /// Catalog id (default: from the config's _name_or_path).
        #[arg(long)]
        id: Option<String>,
        /// Display name.
        #[arg(long)]
        name: Option<String>,
        /// How users write the name (repeatable).
        #[arg(long = "alias")]
        aliases: Vec<String>,
        /// Where the config was read (URL and revision).
        #[arg(long)]
        source: Option<String>,
        /// Month the weights were published, YYYY-MM (the model card's date).
        #[arg(long)]
        released: Option<String>,
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
    if let Command::Model {
        command:
            ModelCommand::Import {
                config,
                id,
                name,
                aliases,
                source,
                released,
            },
    } = &cli.command
    {
        let opts = gpu_advisor::advisor::catalog::import::ImportOptions {
            id: id.clone(),
            name: name.clone(),
            aliases: aliases.clone(),
            source: source.clone(),
            released: released.clone(),
        };
        return cli::model::import_config(config, &opts);
    }
    let advisor = match load(&cli) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match &cli.command {
        Command::Ask {
            json,
            jsonl,
            question,
        } => cli::ask(&advisor, *json, *jsonl, &question.join(" ")),
        Command::Check => cli::check(&cli.catalog, &cli.intents, &advisor),
        Command::DiscordCommands => {
            cli::outln!("{:#}", discord::command_definitions(&advisor.catalog));
            ExitCode::SUCCESS
        }
        Command::Eval { file } => cli::eval::run(&advisor, file),
        Command::Serve => {
            let dirs = DataDirs {
                catalog: cli.catalog.clone(),
                intents: cli.intents.clone(),
            };
            cli::serve(
                advisor,
                cli.config.as_deref(),
                cli.log_format.as_deref(),
                dirs,
            )
        }
        Command::Report { file, top } => cli::report(&advisor, file, *top),
        Command::Model { .. } => unreachable!("handled before loading the data"),
    }
}
