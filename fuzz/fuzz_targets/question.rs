//! The question parser and everything behind it (estimate, recommend, render): any
//! bytes, as a first question and again as a follow-up in the same conversation; and,
//! split at the first newline, as two turns of one conversation.
#![no_main]

use gpu_advisor::advisor::{Advisor, Answer, State};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(gpu_advisor::data::embedded)
}

fn check(a: &Answer) {
    assert!(!a.reply().trim().is_empty(), "empty reply");
    assert!(a.reply().chars().count() <= 4000, "reply over 4000 chars");
    let v = serde_json::to_value(a).expect("the answer serializes");
    // serde_json writes NaN and infinities as null: a null memory figure is a NaN leak.
    if let Some(e) = v.get("estimate").and_then(|e| e.as_object()) {
        for key in [
            "total_gb",
            "weights_gb",
            "kv_cache_gb",
            "activations_gb",
            "overhead_gb",
        ] {
            let x = e[key]
                .as_f64()
                .unwrap_or_else(|| panic!("estimate.{key} is {}", e[key]));
            assert!(x >= 0.0, "estimate.{key} = {x}");
        }
    }
    if let Some(r) = v.get("recommendation").and_then(|r| r.as_object()) {
        let m = r["monthly_cny"]["min"]
            .as_f64()
            .expect("a priced recommendation");
        assert!(m.is_finite() && m >= 0.0, "monthly price {m}");
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (first, state) = advisor().answer(&text, &State::default());
    check(&first);
    let (second, _) = advisor().answer(&text, &state);
    check(&second);
    if let Some((a, b)) = text.split_once('\n') {
        let (first, state) = advisor().answer(a, &State::default());
        check(&first);
        let (next, _) = advisor().answer(b, &state);
        check(&next);
    }
});
