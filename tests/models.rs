//! Adding a model without a release: `model import` turns a Hugging Face config.json into
//! a `models.toml` entry, `check` accepts it, and the advisor then answers for it.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str], dir: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ask(q: &str, dir: &Path) -> Value {
    let (ok, out, err) = run(&["ask", "--json", q], dir);
    assert!(ok, "{err}");
    serde_json::from_str(&out).expect("json")
}

#[test]
fn an_imported_model_is_answered_for() {
    let tmp = std::env::temp_dir().join(format!("gpu-advisor-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for d in ["catalog", "intents"] {
        std::fs::create_dir_all(tmp.join(d)).expect("mkdir");
        for e in std::fs::read_dir(root().join(d)).expect("dir") {
            let p = e.expect("entry").path();
            std::fs::copy(&p, tmp.join(d).join(p.file_name().expect("name"))).expect("copy");
        }
    }
    // Next month's model: a config.json as the hub serves it (here the gpt-oss-20b
    // architecture under a name the catalog does not have).
    let mut config: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/configs/gpt-oss-20b.json"))
            .expect("fixture"),
    )
    .expect("json");
    config["_name_or_path"] = "example/Qwen4-21B-A4B".into();
    let path = tmp.join("config.json");
    std::fs::write(&path, config.to_string()).expect("write");

    let q = "Qwen4-21B-A4B 单卡 4090 能跑吗";
    let before = ask(q, &tmp);
    assert_eq!(before["workload"]["model"], Value::Null);
    let reply = before["reply"].as_str().unwrap_or_default();
    assert!(
        reply.contains("Qwen4-21B-A4B") && reply.contains("通用"),
        "{reply}"
    );

    let (ok, entry, err) = run(
        &[
            "model",
            "import",
            path.to_str().expect("utf-8"),
            "--id",
            "qwen4-21b-a4b",
            "--name",
            "Qwen4-21B-A4B",
            "--alias",
            "qwen4 21b",
            "--source",
            "https://huggingface.co/example/Qwen4-21B-A4B/blob/main/config.json",
        ],
        &tmp,
    );
    assert!(ok, "{err}");
    assert!(entry.contains("native_precision = \"mxfp4\""), "{entry}");
    assert!(entry.contains("sliding_window = 128"), "{entry}");
    let models = tmp.join("catalog/models.toml");
    let mut text = std::fs::read_to_string(&models).expect("models");
    text.push('\n');
    text.push_str(&entry);
    std::fs::write(&models, text).expect("write");
    let (ok, out, err) = run(&["check"], &tmp);
    assert!(ok, "{err}");
    assert!(out.starts_with("ok:"), "{out}");

    let after = ask(q, &tmp);
    assert_eq!(after["workload"]["model"], "qwen4-21b-a4b");
    let params = after["workload"]["params_b"].as_f64().expect("params");
    assert!((params - 20.9).abs() < 0.2, "{params}");
    assert_eq!(after["workload"]["precision"], "int4");
    assert_eq!(after["verdict"]["fits"], true);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_config_that_is_not_one_is_refused_with_its_reason() {
    let tmp = std::env::temp_dir().join(format!("gpu-advisor-badcfg-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let path = tmp.join("config.json");
    std::fs::write(&path, "{\"hidden_size\": 4096}").expect("write");
    let (ok, _, err) = run(&["model", "import", path.to_str().expect("utf-8")], &tmp);
    assert!(!ok);
    assert!(err.contains("num_hidden_layers"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}
