//! `gpu-advisor model import PATH/config.json`: a Hugging Face config read from disk (no
//! network) → the `models.toml` entry, printed for review; what the config could not
//! give is named on stderr. `check` then validates the catalog with the entry added.

use gpu_advisor::advisor::catalog::import::{import, ImportOptions};
use std::path::Path;
use std::process::ExitCode;

pub fn import_config(path: &Path, opts: &ImportOptions) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: reading {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    match import(&text, opts) {
        Ok(m) => {
            outln!(
                "# {}: {} B parameters, {} B active (counted from {})",
                m.id,
                format_b(m.params_b),
                format_b(m.active_params_b),
                path.display()
            );
            print!("{}", m.toml);
            for f in &m.missing {
                eprintln!("note: not derived from the config: {f}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            ExitCode::from(2)
        }
    }
}

fn format_b(n: f64) -> String {
    format!("{:.2}", n / 1e9)
}
