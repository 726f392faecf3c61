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

#[test]
fn core_names_no_io() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/advisor");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("src/advisor exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        for word in FORBIDDEN {
            assert!(!text.contains(word), "{} names {word}", path.display());
        }
        checked += 1;
    }
    assert!(checked >= 10, "expected the core modules, found {checked}");
}
