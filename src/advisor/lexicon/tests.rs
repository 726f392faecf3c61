use super::*;

use crate::advisor::fixtures::{lexicon, CUES, FOLLOWUPS, SLOTS};

/// The first match of `name` in `question` (normalised first), as its value.
fn check(name: impl Name, question: &str, expected: Option<f64>) {
    let got = lexicon().find(name, &normalize(question)).map(|f| f.value);
    assert_eq!(got, expected, "{} in {question:?}", name.name());
}

/// `slots.toml` (or another file of entries) without the `[[slot]]` entry called `name`.
fn without_slot(name: &str) -> String {
    without_slot_in(SLOTS, name)
}

fn without_slot_in(file: &str, name: &str) -> String {
    file.split("[[slot]]")
        .filter(|e| !e.contains(&format!("name = \"{name}\"\n")))
        .collect::<Vec<_>>()
        .join("[[slot]]")
}

#[test]
fn slots_read_numbers_as_people_write_them() {
    check(Slot::Context, "上下文 32k", Some(32000.0));
    check(Slot::Concurrency, "并发 100 路", Some(100.0));
    check(Slot::BudgetAmount, "预算三千五", Some(3500.0));
    check(Slot::MonthsHalf, "租半年", Some(6.0));
    // Paying by the year is a rental of a year, like 包年.
    check(Slot::Years, "年付多少", Some(1.0));
    check(Slot::Years, "年度报告", None);
    check(Cue::Price, "A100 多少钱", Some(1.0));
    check(Cue::Help, "A100 多少钱", None);
}

#[test]
fn normalize_folds_width_case_and_space() {
    assert_eq!(normalize("  ＡＢＣ\t\n 4090×2 "), "abc 4090x2");
}

#[test]
fn every_name_the_parser_reads_is_required() {
    for name in names::required() {
        let (slots, followups) = (without_slot(name), without_slot_in(FOLLOWUPS, name));
        if slots == SLOTS && followups == FOLLOWUPS {
            continue; // a cue: cues.toml is checked below
        }
        let problems = Lexicon::build(&[
            ("cues.toml", CUES),
            ("slots.toml", &slots),
            ("followups.toml", &followups),
        ])
        .expect_err("a missing slot is a problem");
        assert!(
            problems
                .iter()
                .any(|p| p.key == name && p.message.contains("missing")),
            "removing {name} is not reported: {problems:?}"
        );
    }
    let cues = CUES.replace("name = \"offtopic\"", "name = \"off-topic\"");
    let problems = Lexicon::build(&[
        ("cues.toml", &cues),
        ("slots.toml", SLOTS),
        ("followups.toml", FOLLOWUPS),
    ])
    .expect_err("a renamed cue is a problem");
    assert!(problems.iter().any(|p| p.key == "offtopic"));
}

#[test]
fn examples_that_fail_are_reported_with_file_and_key() {
    let slots = SLOTS.replace("match = [\"租半年\"]", "match = [\"租半年\", \"一年\"]");
    let problems = Lexicon::build(&[
        ("cues.toml", CUES),
        ("slots.toml", &slots),
        ("followups.toml", FOLLOWUPS),
    ])
    .expect_err("a failing example is a problem");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].file, "slots.toml");
    assert_eq!(problems[0].key, "slot[months.half]");
}

/// The scan reads every shipped pattern as one `regex::RegexSet` of the same sources does,
/// on every example text of the intents files: the literal gate in front of the set
/// changes how fast, never what.
#[test]
fn the_gated_scan_finds_what_a_regex_set_finds() {
    let lex = lexicon();
    let sources: Vec<String> = lex
        .entries
        .iter()
        .filter(|e| !e.around)
        .flat_map(|e| e.patterns.iter().map(|re| re.as_str().to_string()))
        .collect();
    let regex_set = regex::RegexSetBuilder::new(&sources)
        .size_limit(1 << 26)
        .dfa_size_limit(1 << 26)
        .build()
        .expect("the shipped patterns");
    let mut texts = Vec::new();
    for file in [CUES, SLOTS, FOLLOWUPS] {
        let doc: toml::Table = toml::from_str(file).expect("toml");
        for list in doc.values().filter_map(|v| v.as_array()) {
            for entry in list.iter().filter_map(|v| v.as_table()) {
                for key in ["match", "no_match"] {
                    for t in entry
                        .get(key)
                        .and_then(|v| v.as_array())
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = t.as_str() {
                            texts.push(lex.normalise(t));
                        }
                    }
                }
            }
        }
    }
    assert!(
        texts.len() > 1000,
        "the examples were read: {}",
        texts.len()
    );
    let mut matched = 0;
    for t in &texts {
        let want: Vec<usize> = regex_set.matches(t).iter().collect();
        matched += want.len();
        assert_eq!(lex.all.matches(t), want, "{t:?}");
    }
    assert!(matched > texts.len(), "the texts match patterns: {matched}");
}
