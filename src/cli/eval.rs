//! `gpu-advisor eval FILE`: runs an evaluation corpus (the format of
//! shared/eval/dev.jsonl) in-process and prints per-field accuracy and per-intent
//! precision and recall.

use gpu_advisor::advisor::{Advisor, State};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

// The checks below follow `shared/eval/score.py` exactly (it is the reference): its
// values are Python values, so equality is Python's `==` (1 == 1.0 == True), a list
// spec is "one of" for strings and a range for numbers, a string spec iterated is its
// characters, and any check that would raise in Python (a type error, a bad pattern)
// fails instead.

/// Python's `a == b` for JSON values.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (py_num(a), py_num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// A number as Python does arithmetic with it (bool is an int).
fn py_num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python's `a <= b`; `None` where Python raises a TypeError.
fn py_le(a: &Value, b: &Value) -> Option<bool> {
    py_cmp(a, b).map(|o| o != std::cmp::Ordering::Greater)
}

fn py_cmp(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.as_str().cmp(y.as_str())),
        (Value::Array(x), Value::Array(y)) => {
            // Lexicographic: the first pair that differs decides, else the lengths.
            for (x, y) in x.iter().zip(y) {
                if !py_eq(x, y) {
                    return py_cmp(x, y);
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => py_num(a)?.partial_cmp(&py_num(b)?),
    }
}

/// Python's truth value.
fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `d.get(key)` on a dict, `None` (null) when `d` is not one or lacks the key.
fn py_get<'a>(d: &'a Value, key: &str) -> &'a Value {
    d.get(key).unwrap_or(&Value::Null)
}

/// `d or {}` / `d or ""`: the value, or null when it is falsy (null then reads as
/// missing, like the empty default).
fn py_or_empty(v: &Value) -> &Value {
    if py_truthy(v) {
        v
    } else {
        &Value::Null
    }
}

/// What iterating a value yields in Python (`for x in v`, `set(v)`); `None` where it
/// raises (numbers, bools, null).
fn py_iter(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::Array(a) => Some(a.clone()),
        Value::String(s) => Some(s.chars().map(|c| Value::String(c.to_string())).collect()),
        Value::Object(o) => Some(o.keys().map(|k| Value::String(k.clone())).collect()),
        _ => None,
    }
}

/// `set(v)`: `None` where it raises (not iterable, or an unhashable member).
fn py_set(v: &Value) -> Option<Vec<Value>> {
    let items = py_iter(v)?;
    items
        .iter()
        .all(|x| !matches!(x, Value::Array(_) | Value::Object(_)))
        .then_some(items)
}

/// score.py `in_range(v, spec, rel=0.05)`; `None` where it raises.
fn in_range(v: &Value, spec: &Value) -> Option<bool> {
    if v.is_null() {
        return Some(false);
    }
    match spec {
        Value::Array(a) => Some(py_le(a.first()?, v)? && py_le(v, a.get(1)?)?),
        s => {
            let (x, s) = (py_num(v)?, py_num(s)?);
            Some((x - s).abs() <= s.abs() * 0.05 + 1e-9)
        }
    }
}

/// score.py `one_of(v, spec)`: `v in spec` for a list, else `v == spec`.
fn one_of(v: &Value, spec: &Value) -> bool {
    match spec {
        Value::Array(a) => a.iter().any(|x| py_eq(v, x)),
        s => py_eq(v, s),
    }
}

/// `any(re.search(p, text) for p in spec)`; `None` where it raises: a spec that is not
/// iterable, a pattern that is not a string, or one the regex engine cannot compile
/// (before any earlier pattern matched).
fn search_any(text: &Value, spec: &Value) -> Option<bool> {
    let text = text.as_str()?;
    for p in py_iter(spec)? {
        let re = regex::Regex::new(p.as_str()?);
        match re {
            Ok(re) if re.is_match(text) => return Some(true),
            Ok(_) => {}
            Err(e) => {
                eprintln!("warning: pattern {p} does not compile here: {e}");
                return None;
            }
        }
    }
    Some(false)
}

/// Python's `a is b` for two values parsed from JSON: the singletons, and the small
/// integers CPython caches.
fn py_is(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => {
            matches!((x.as_i64(), y.as_i64()), (Some(x), Some(y)) if x == y && (-5..=256).contains(&x))
                && !x.is_f64()
                && !y.is_f64()
        }
        _ => false,
    }
}

/// score.py `check(ans, key, spec)`; a check that raises there fails here.
fn check(ans: &Value, key: &str, spec: &Value) -> bool {
    checked(ans, key, spec).unwrap_or(false)
}

fn checked(ans: &Value, key: &str, spec: &Value) -> Option<bool> {
    let wl = py_or_empty(py_get(ans, "workload"));
    let cons = py_or_empty(py_get(ans, "constraints"));
    let est = py_or_empty(py_get(ans, "estimate"));
    let rec = py_get(ans, "recommendation");
    let ver = py_or_empty(py_get(ans, "verdict"));
    let reply = match py_or_empty(py_get(ans, "reply")) {
        Value::Null => &Value::String(String::new()),
        r => r,
    };
    Some(match key {
        "intent" => one_of(py_get(ans, "intent"), spec),
        "lang" => py_eq(py_get(ans, "lang"), spec),
        "params_b" | "active_params_b" | "train_tokens" | "context_tokens" | "concurrency" => {
            in_range(py_get(wl, key), spec)?
        }
        "task" | "precision" => one_of(py_get(wl, key), spec),
        "model_any" => {
            let m = match py_or_empty(py_get(wl, "model")) {
                Value::Null => &Value::String(String::new()),
                m => m,
            };
            search_any(m, spec)?
        }
        "budget_cny_month" | "months" => in_range(py_get(cons, key), spec)?,
        "constraint_gpu" => one_of(py_get(cons, "gpu"), spec),
        "gpu_count" => py_eq(py_get(cons, "gpu_count"), spec),
        "domestic" => py_eq(&Value::Bool(py_truthy(py_get(cons, "domestic"))), spec),
        "rec_gpu" => !rec.is_null() && one_of(py_get(rec, "gpu"), spec),
        "rec_null" => py_eq(&Value::Bool(rec.is_null()), spec),
        "rec_max_monthly" => {
            let max = py_get(py_get(rec, "monthly_cny"), "max");
            !rec.is_null() && !max.is_null() && py_le(max, spec)?
        }
        "total_gb" | "train_hours" => in_range(py_get(est, key), spec)?,
        "verdict_gpu" => one_of(py_get(ver, "gpu"), spec),
        "fits" => py_is(py_get(ver, "fits"), spec),
        "compare_has" => {
            let got = py_set(py_or_empty(py_get(ans, "compare"))).unwrap_or_default();
            let mut all = true;
            for group in py_iter(spec)? {
                let group = py_set(&group)?;
                all &= group.iter().any(|g| got.iter().any(|x| py_eq(x, g)));
            }
            all
        }
        "topics_any" => {
            let got = py_set(py_or_empty(py_get(ans, "topics"))).unwrap_or_default();
            py_set(spec)?
                .iter()
                .any(|s| got.iter().any(|x| py_eq(x, s)))
        }
        "reply_any" => search_any(reply, spec)?,
        "reply_none" => !search_any(reply, spec)?,
        "reply_max_chars" => {
            let n = reply.as_str()?.chars().count();
            py_le(&Value::from(n), spec)?
        }
        // Any field by its dotted path (dicts only): a string, null or bool must equal
        // (one of a list of) the value; anything else is a range, for a number only.
        "at" => {
            let mut all = true;
            for (path, v) in spec.as_object()? {
                let got = path.split('.').fold(ans, |d, p| py_get(d, p));
                all &= match v {
                    Value::String(_) | Value::Null | Value::Bool(_) => one_of(got, v),
                    _ if matches!(got, Value::Number(_)) => in_range(got, v)?,
                    _ => false,
                };
                if !all {
                    break;
                }
            }
            all
        }
        _ => return None,
    })
}

/// The last answer of a conversation, each turn as `ask --jsonl` reads it from
/// score.py (its newlines made spaces, trailing line ends cut); `None` where score.py
/// fails the case (no turns, or a turn that is not a string; a string is iterated as
/// its characters, as Python does).
fn conversation(advisor: &Advisor, turns: &Value) -> Option<Value> {
    let mut state = State::default();
    let mut last = None;
    for turn in py_iter(turns)? {
        let line = turn.as_str()?.replace('\n', " ");
        let (a, next) = advisor.answer(line.trim_end_matches('\r'), &state);
        state = next;
        last = Some(serde_json::to_value(&a).ok()?);
    }
    last
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
        // As score.py feeds them to `ask --jsonl`: a case whose turns are not a non-empty
        // list of strings fails whole.
        let last = conversation(advisor, &case["turns"]);
        let mut bad = Vec::new();
        for (k, spec) in case["expect"].as_object().into_iter().flatten() {
            let ok = last.as_ref().is_some_and(|last| check(last, k, spec));
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
            let intent = last.as_ref().map_or(&Value::Null, |l| py_get(l, "intent"));
            let got = intent.as_str().unwrap_or("").to_string();
            let hit = one_of(intent, spec);
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
            outln!(
                "FAIL {}: {}",
                case["id"].as_str().unwrap_or("?"),
                bad.join(", ")
            );
        }
    }
    outln!("\nfield             ok/all");
    for (k, (ok, all)) in &fields {
        outln!("  {k:16} {ok:4}/{all:<4}");
    }
    outln!("\nintent            precision  recall");
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
        outln!("  {k:16} {p:9.2} {r:7.2}");
    }
    outln!("\n{passed} passed, {} failed", total - passed);
    ExitCode::SUCCESS
}
