//! `gpu-advisor eval FILE`: runs an evaluation corpus (the format of
//! shared/eval/dev.jsonl) in-process and prints per-field accuracy and per-intent
//! precision and recall.

use gpu_advisor::advisor::{Advisor, State};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

fn in_range(v: Option<f64>, spec: &Value) -> bool {
    let Some(v) = v else { return false };
    match spec {
        Value::Array(a) if a.len() == 2 => {
            a[0].as_f64().is_some_and(|lo| lo <= v) && a[1].as_f64().is_some_and(|hi| v <= hi)
        }
        s => s
            .as_f64()
            .is_some_and(|x| (v - x).abs() <= x.abs() * 0.05 + 1e-9),
    }
}

fn one_of(v: &Value, spec: &Value) -> bool {
    match spec {
        Value::Array(a) => a.contains(v),
        s => s == v,
    }
}

fn matches_any(text: &str, spec: &Value) -> bool {
    spec.as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p.as_str())
                .any(|p| regex::Regex::new(p).is_ok_and(|re| re.is_match(text)))
        })
        .unwrap_or(false)
}

fn check(ans: &Value, key: &str, spec: &Value) -> bool {
    let wl = &ans["workload"];
    let cons = &ans["constraints"];
    let rec = &ans["recommendation"];
    let f = |v: &Value| v.as_f64();
    match key {
        "intent" => one_of(&ans["intent"], spec),
        "lang" => &ans["lang"] == spec,
        "params_b" | "active_params_b" | "train_tokens" | "context_tokens" | "concurrency" => {
            in_range(f(&wl[key]), spec)
        }
        "task" | "precision" => one_of(&wl[key], spec),
        "model_any" => matches_any(wl["model"].as_str().unwrap_or(""), spec),
        "budget_cny_month" | "months" => in_range(f(&cons[key]), spec),
        "constraint_gpu" => one_of(&cons["gpu"], spec),
        "gpu_count" => &cons["gpu_count"] == spec,
        "domestic" => {
            cons["domestic"].as_bool().unwrap_or(false) == spec.as_bool().unwrap_or(false)
        }
        "rec_gpu" => !rec.is_null() && one_of(&rec["gpu"], spec),
        "rec_null" => rec.is_null() == spec.as_bool().unwrap_or(false),
        "rec_max_monthly" => f(&rec["monthly_cny"]["max"])
            .zip(f(spec))
            .is_some_and(|(m, s)| m <= s),
        "total_gb" | "train_hours" => in_range(f(&ans["estimate"][key]), spec),
        "verdict_gpu" => one_of(&ans["verdict"]["gpu"], spec),
        "fits" => &ans["verdict"]["fits"] == spec,
        "compare_has" => {
            let got: Vec<&Value> = ans["compare"]
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            spec.as_array().is_some_and(|groups| {
                groups.iter().all(|g| {
                    g.as_array()
                        .is_some_and(|g| g.iter().any(|x| got.contains(&x)))
                })
            })
        }
        "topics_any" => {
            let got = ans["topics"].as_array().cloned().unwrap_or_default();
            spec.as_array()
                .is_some_and(|s| s.iter().any(|x| got.contains(x)))
        }
        "reply_any" => matches_any(ans["reply"].as_str().unwrap_or(""), spec),
        "reply_none" => !matches_any(ans["reply"].as_str().unwrap_or(""), spec),
        "reply_max_chars" => spec
            .as_u64()
            .is_some_and(|m| ans["reply"].as_str().unwrap_or("").chars().count() as u64 <= m),
        _ => false,
    }
}

pub fn run(advisor: &Advisor, file: &Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let mut fields: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut intents: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new(); // tp, expected, predicted
    let (mut passed, mut total) = (0, 0);
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let case: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: {}:{}: {e}", file.display(), n + 1);
                return ExitCode::FAILURE;
            }
        };
        total += 1;
        let mut state = State::default();
        let mut last = Value::Null;
        for turn in case["turns"].as_array().into_iter().flatten() {
            let (a, next) = advisor.answer(turn.as_str().unwrap_or(""), &state);
            state = next;
            last = serde_json::to_value(&a).unwrap_or(Value::Null);
        }
        let mut bad = Vec::new();
        for (k, spec) in case["expect"].as_object().into_iter().flatten() {
            let ok = check(&last, k, spec);
            let e = fields.entry(k.clone()).or_default();
            e.1 += 1;
            if ok {
                e.0 += 1;
            } else {
                bad.push(k.clone());
            }
        }
        if let Some(spec) = case["expect"].get("intent") {
            let want = spec
                .as_array()
                .and_then(|a| a.first())
                .unwrap_or(spec)
                .as_str()
                .unwrap_or("")
                .to_string();
            let got = last["intent"].as_str().unwrap_or("").to_string();
            let hit = one_of(&last["intent"], spec);
            intents.entry(want.clone()).or_default().1 += 1;
            let pred = if hit { want.clone() } else { got };
            intents.entry(pred).or_default().2 += 1;
            if hit {
                intents.entry(want).or_default().0 += 1;
            }
        }
        if bad.is_empty() {
            passed += 1;
        } else {
            println!(
                "FAIL {}: {}",
                case["id"].as_str().unwrap_or("?"),
                bad.join(", ")
            );
        }
    }
    println!("\nfield             ok/all");
    for (k, (ok, all)) in &fields {
        println!("  {k:16} {ok:4}/{all:<4}");
    }
    println!("\nintent            precision  recall");
    for (k, (tp, exp, pred)) in &intents {
        let p = if *pred > 0 {
            *tp as f64 / *pred as f64
        } else {
            0.0
        };
        let r = if *exp > 0 {
            *tp as f64 / *exp as f64
        } else {
            0.0
        };
        println!("  {k:16} {p:9.2} {r:7.2}");
    }
    println!("\n{passed} passed, {} failed", total - passed);
    ExitCode::SUCCESS
}
