//! The binary's contract (CONTRACT.md §1): `ask`, `ask --json`, `ask --jsonl`.

use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpu-advisor"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[test]
fn ask_json_is_one_line() {
    let out = bin()
        .args(["ask", "--json", "4090 能跑 70B 吗"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(s.trim_end().lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&s).expect("json");
    assert_eq!(v["intent"], "feasibility");
    assert_eq!(v["verdict"]["gpu"], "rtx4090");
}

#[test]
fn ask_jsonl_answers_every_line_including_empty_ones() {
    let mut child = bin()
        .args(["ask", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawns");
    let input = "3090 能跑 13B 吗\n\nINT4 呢\n\u{1F914}\n";
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("waits");
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["intent"], "help");
    // The empty line did not break the conversation: the follow-up still sees turn 1.
    assert_eq!(lines[2]["verdict"]["fits"], true);
    assert_eq!(lines[2]["workload"]["precision"], "int4");
}

#[test]
fn ask_prints_markdown() {
    let out = bin()
        .args(["ask", "微调 Qwen-14B 要什么卡?"])
        .output()
        .expect("runs");
    let s = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        s.contains("Qwen-14B") && s.contains("LoRA") && s.contains("A100"),
        "{s}"
    );
}

#[test]
fn binary_input_does_not_crash() {
    let mut child = bin()
        .args(["ask", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&[0xff, 0xfe, 0x00, b'\n', 0x80, b'\n'])
        .expect("write");
    let out = child.wait_with_output().expect("waits");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

#[test]
fn discord_commands_prints_the_registration_json() {
    let out = bin().args(["discord-commands"]).output().expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let names: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["gpu", "price", "faq", "compare", "auto"]);
}

#[test]
fn a_question_starting_with_a_hyphen_is_a_question() {
    for args in [
        &["ask", "-1B 模型推理"][..],
        &["ask", "--json", "-1B 模型推理"],
        &["ask", "--", "-1B 模型推理"],
    ] {
        let out = bin().args(args).output().expect("runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let out = bin()
        .args(["ask", "--json", "-1B 模型推理"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["intent"].is_string(), "{v}");
    // The flags still work.
    let out = bin().args(["ask", "--help"]).output().expect("runs");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--jsonl"));
}

#[test]
fn serve_refuses_settings_that_would_open_it_up() {
    let port = crate::support::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    // (environment, the variable the error names)
    let cases: [(&[(&str, &str)], &str); 2] = [
        // A token list of only commas is not "no tokens" (open mode).
        (&[("GPU_ADVISOR_API_TOKEN", ",")], "GPU_ADVISOR_API_TOKEN"),
        // A Telegram webhook anyone could post forged updates to.
        (
            &[
                ("TELOXIDE_TOKEN", "123:TEST"),
                (
                    "TELEGRAM_WEBHOOK_URL",
                    "https://bot.example.test/telegram/webhook",
                ),
            ],
            "TELEGRAM_WEBHOOK_SECRET",
        ),
    ];
    for (env, named) in cases {
        let mut c = bin();
        c.arg("serve").env("GPU_ADVISOR_LISTEN", &listen);
        for k in [
            "GPU_ADVISOR_API_TOKEN",
            "TELEGRAM_WEBHOOK_SECRET",
            "TELEGRAM_WEBHOOK_URL",
        ] {
            c.env_remove(k);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        // A regression would serve: stop it rather than hang.
        let t0 = std::time::Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if t0.elapsed() > std::time::Duration::from_secs(10) {
                let _ = child.kill();
                panic!("serve started with {env:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().expect("output");
        assert_eq!(out.status.code(), Some(2), "{env:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{err}");
    }
}

/// The cases of a corpus that `gpu-advisor eval` fails, by id.
fn eval_failures(corpus: &str) -> Vec<String> {
    let out = bin().args(["eval", corpus]).output().expect("runs");
    assert!(out.status.success());
    let mut ids: Vec<String> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .filter_map(|l| l.split([':', ' ']).next().map(str::to_string))
        .collect();
    ids.sort();
    ids
}

/// `eval` scores as shared/eval/score.py does (the reference): the expectation
/// semantics of `tests/data/eval-semantics.jsonl` (Python equality, `at` paths through
/// dicts only, a list spec for strings against ranges for numbers, a string spec as its
/// characters, a check that would raise failing) and the cases that fail are the same.
#[test]
fn eval_follows_the_reference_scorer() {
    let corpus = "tests/data/eval-semantics.jsonl";
    let want = [
        "s-bool-as-num",
        "s-fits-one",
        "s-list-index",
        "s-model-badre",
        "s-no-turns",
        "s-num-as-str",
        "s-rec-max-low",
        "s-str-list",
        "s-topics-str",
        "s-unknown-key",
    ];
    assert_eq!(eval_failures(corpus), want);
    // Where the reference scorer is at hand (CI runs next to shared/), it agrees.
    let shared = std::env::var("SHARED_DIR").unwrap_or_else(|_| "../shared".into());
    let score = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(shared)
        .join("eval/score.py");
    if !score.exists() {
        eprintln!(
            "{} not found: eval checked against its expected failures only",
            score.display()
        );
        return;
    }
    let out = Command::new("python3")
        .arg(&score)
        .arg(corpus)
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_gpu-advisor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python3 runs");
    let mut ids: Vec<String> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .filter_map(|l| l.split([':', ' ']).next().map(str::to_string))
        .collect();
    ids.sort();
    assert_eq!(ids, want, "score.py");
}

/// `report` over a misses log as the adapters write it: the questions grouped by what each
/// lacked, a model the catalog does not know, a number no slot read, or a topic with the
/// topics nearest to it (where the sales team would add an example).
#[test]
fn report_groups_misses_by_what_was_missing() {
    let dir = std::env::temp_dir().join(format!("gpu-advisor-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = dir.join("misses.jsonl");
    let lines = [
        ("telegram", "Kimi K2.5 要几张卡"),
        ("telegram", "Kimi K2.5 要几张卡"),
        ("wecom", "ERNIE 5 推理要什么配置"),
        ("discord", "每天大概 3 千次调用够不够"),
        ("http", "发票怎么开，能开专票吗"),
        ("http", "发票怎么开，能开专票吗"),
        ("discord", "do you accept payment by credit card or paypal?"),
        ("telegram", "能不能先试用一下再付钱"),
    ];
    let text: String = lines
        .iter()
        .map(|(c, q)| format!("{}\n", serde_json::json!({"channel": c, "question": q})))
        .collect();
    std::fs::write(&log, text).expect("write log");
    let out = bin().arg("report").arg(&log).output().expect("runs");
    assert!(out.status.success(), "{out:?}");
    let report = String::from_utf8(out.stdout).expect("utf-8");
    let _ = std::fs::remove_dir_all(&dir);

    assert!(
        report.starts_with("6 distinct unanswered questions"),
        "{report}"
    );
    // Each group's lines, up to the next group.
    let group = |name: &str| -> Vec<String> {
        let head = format!("missing {name}:");
        let start = report
            .find(&head)
            .unwrap_or_else(|| panic!("{head}\n{report}"));
        report[start..]
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("missing ") && !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let models = group("model");
    assert!(
        report.contains("missing model: 3 questions, 2 distinct"),
        "{report}"
    );
    assert!(
        models[0].contains("kimi k2.5") && models[0].starts_with("     2"),
        "{report}"
    );
    assert!(models.iter().any(|l| l.contains("[ernie 5]")), "{report}");
    let numbers = group("number");
    assert_eq!(numbers.len(), 1, "{report}");
    assert!(numbers[0].contains("3 千次调用"), "{report}");
    // A topic miss names the topics nearest to it, the billing one for a payment question.
    let topics = group("topic");
    assert_eq!(topics.len(), 3, "{report}");
    assert!(topics.iter().all(|l| l.contains("[near: ")), "{report}");
    let paypal = topics
        .iter()
        .find(|l| l.contains("paypal"))
        .expect("paypal");
    assert!(paypal.contains("[near: billing "), "{report}");
}
