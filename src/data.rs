//! Loading the data files: `catalog/` and `intents/` from disk when the directories
//! exist, else the copies embedded in the binary at build time (so `serve` runs from
//! anywhere). All problems are reported at once, with file and key.

use crate::advisor::catalog::{Catalog, CatalogSources, Problem};
use crate::advisor::lexicon::Lexicon;
use crate::advisor::Advisor;
use std::path::Path;

const CATALOG_FILES: [&str; 5] = [
    "gpus.toml",
    "offers.toml",
    "models.toml",
    "topics.toml",
    "billing.toml",
];

const EMBEDDED_CATALOG: [&str; 5] = [
    include_str!("../catalog/gpus.toml"),
    include_str!("../catalog/offers.toml"),
    include_str!("../catalog/models.toml"),
    include_str!("../catalog/topics.toml"),
    include_str!("../catalog/billing.toml"),
];

const EMBEDDED_INTENTS: [(&str, &str); 4] = [
    ("cues.toml", include_str!("../intents/cues.toml")),
    ("normalise.toml", include_str!("../intents/normalise.toml")),
    ("slots.toml", include_str!("../intents/slots.toml")),
    ("followups.toml", include_str!("../intents/followups.toml")),
];

/// Where the data came from, for the start-up log and `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Embedded,
    Dir(String),
}

fn read_dir_files(dir: &Path, ext: &str, problems: &mut Vec<Problem>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == ext))
            {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match std::fs::read_to_string(&p) {
                    Ok(text) => out.push((name, text)),
                    Err(e) => problems.push(Problem {
                        file: p.display().to_string(),
                        key: "-".into(),
                        message: e.to_string(),
                    }),
                }
            }
        }
        Err(e) => problems.push(Problem {
            file: dir.display().to_string(),
            key: "-".into(),
            message: e.to_string(),
        }),
    }
    out
}

/// Loads and validates both directories (or the embedded defaults when a directory is
/// absent) into an advisor.
pub fn load(catalog_dir: &Path, intents_dir: &Path) -> Result<(Advisor, Origin), Vec<Problem>> {
    let mut problems = Vec::new();
    // What is on disk; None where the embedded copy stands in.
    let texts: Option<[String; 5]> = catalog_dir.is_dir().then(|| {
        CATALOG_FILES.map(|f| {
            let p = catalog_dir.join(f);
            std::fs::read_to_string(&p).unwrap_or_else(|e| {
                problems.push(Problem {
                    file: p.display().to_string(),
                    key: "-".into(),
                    message: e.to_string(),
                });
                String::new()
            })
        })
    });
    let read = intents_dir
        .is_dir()
        .then(|| read_dir_files(intents_dir, "toml", &mut problems));
    if !problems.is_empty() {
        return Err(problems);
    }
    let (catalog, origin) = match &texts {
        Some(t) => (
            t.each_ref().map(String::as_str),
            Origin::Dir(catalog_dir.display().to_string()),
        ),
        None => (EMBEDDED_CATALOG, Origin::Embedded),
    };
    let intents: Vec<(&str, &str)> = match &read {
        Some(files) => files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect(),
        None => EMBEDDED_INTENTS.to_vec(),
    };
    build(catalog, &intents).map(|a| (a, origin))
}

/// Validates the five catalog texts (in the order of CATALOG_FILES) and the intent
/// files (name, text) into an advisor, with every problem found.
fn build(catalog: [&str; 5], intents: &[(&str, &str)]) -> Result<Advisor, Vec<Problem>> {
    let catalog = Catalog::build(&CatalogSources {
        gpus: catalog[0],
        offers: catalog[1],
        models: catalog[2],
        topics: catalog[3],
        billing: catalog[4],
    });
    match (catalog, Lexicon::build(intents)) {
        (Ok(c), Ok(l)) => Ok(Advisor::new(c, l)),
        (c, l) => {
            let mut all = c.err().unwrap_or_default();
            all.extend(l.err().unwrap_or_default());
            Err(all)
        }
    }
}

/// The advisor on the embedded data only (tests, benchmarks, fuzzing).
pub fn embedded() -> Advisor {
    build(EMBEDDED_CATALOG, &EMBEDDED_INTENTS).expect("embedded data is valid")
}
