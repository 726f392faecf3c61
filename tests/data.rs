//! The data files: the shipped catalog and intents load and validate (which runs every
//! intent entry's examples), and broken files are reported with file and key, all at once.

use gpu_advisor::advisor::catalog::TOPIC_IDS;
use gpu_advisor::data;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shipped_data_loads() {
    let (advisor, origin) =
        data::load(&root().join("catalog"), &root().join("intents")).expect("valid data");
    assert!(matches!(origin, data::Origin::Dir(_)));
    let c = &advisor.catalog;
    for id in [
        "t4",
        "v100s-32g",
        "rtx3090",
        "rtx4090",
        "a100-40g",
        "a100-80g",
        "h100-sxm",
        "h20",
        "h200",
        "l40s",
        "a16",
        "ascend-910b",
    ] {
        assert!(c.gpu(id).is_some(), "gpu {id}");
    }
    for id in [
        "t4",
        "v100s-32g",
        "rtx3090",
        "rtx4090",
        "a100-40g",
        "a100-80g-x8",
        "h100-x8",
        "h100-hourly",
        "a100-slice-1-20",
        "a16-slice-1-16",
        "ascend-910b",
    ] {
        assert!(c.offer(id).is_some(), "offer {id}");
    }
    assert!(c.models.len() >= 40, "{} models", c.models.len());
    assert_eq!(c.topics.len(), TOPIC_IDS.len());
}

#[test]
fn embedded_data_matches_files() {
    let a = data::embedded();
    let (b, _) = data::load(&root().join("catalog"), &root().join("intents")).expect("valid data");
    assert_eq!(a.catalog.models.len(), b.catalog.models.len());
    assert_eq!(a.catalog.offers.len(), b.catalog.offers.len());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
    }
}

#[test]
fn check_reports_every_problem_with_file_and_key() {
    let tmp = std::env::temp_dir().join(format!("gpu-advisor-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_dir(&root().join("catalog"), &tmp.join("catalog"));
    copy_dir(&root().join("intents"), &tmp.join("intents"));
    let offers = tmp.join("catalog/offers.toml");
    let text = std::fs::read_to_string(&offers).expect("offers");
    let broken = text.replacen("gpu = \"t4\"", "gpu = \"t5\"", 1).replacen(
        "counts = [1, 2, 4, 8]",
        "counts = [1, 3]",
        1,
    );
    std::fs::write(&offers, broken).expect("write");
    let topics = tmp.join("catalog/topics.toml");
    let text = std::fs::read_to_string(&topics).expect("topics");
    std::fs::write(
        &topics,
        text.replacen("id = \"nvlink\"", "id = \"nvlink-x\"", 1),
    )
    .expect("write");

    let out = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
        .args(["check", "--catalog"])
        .arg(tmp.join("catalog"))
        .arg("--intents")
        .arg(tmp.join("intents"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("offers.toml: offer[t4].gpu: unknown gpu id \"t5\""),
        "{err}"
    );
    assert!(err.contains("offers.toml: offer[t4].counts"), "{err}");
    assert!(err.contains("topics.toml: topic[nvlink-x].id"), "{err}");
    assert!(err.contains("topics.toml: topic[nvlink]: missing"), "{err}");

    // A pattern that breaks its own example is caught the same way.
    let cues = tmp.join("intents/cues.toml");
    let text = std::fs::read_to_string(&cues).expect("cues");
    std::fs::write(
        &cues,
        text.replacen("'多少钱', ", "", 1)
            .replacen("'价格', ", "", 1),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
        .args(["check", "--intents"])
        .arg(tmp.join("intents"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cues.toml: cue[price]: must match \"H100 8卡整机多少钱\""),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn check_passes_on_shipped_data() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
        .arg("check")
        .current_dir(root())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok: 12 GPUs, 11 offers"));
}
