//! The core stays pure: no module under src/advisor names a runtime, network, platform
//! or IO facility. Adapters and the app layer own those.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "tokio",
    "reqwest",
    "axum",
    "teloxide",
    "serenity",
    "redis",
    "std::fs",
    "std::env",
    "std::net",
    "SystemTime",
    "Instant::now",
];

/// Every `.rs` file under `dir`, subfolders included.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_names_no_io() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/advisor");
    let mut files = Vec::new();
    sources(&dir, &mut files);
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable source");
        for word in FORBIDDEN {
            assert!(!text.contains(word), "{} names {word}", path.display());
        }
    }
    // The core's modules and their subfolders (parse/, estimate/, recommend/, answer/…).
    assert!(
        files
            .iter()
            .any(|f| f.components().count() > dir.components().count() + 1),
        "subfolders are read"
    );
    assert!(
        files.len() >= 30,
        "expected the core modules, found {}",
        files.len()
    );
}
