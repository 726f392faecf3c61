use crate::advisor::fixtures::{advisor, catalog_with, GPUS, OFFERS};

/// `text` with the first `key = …` line after `id = "{id}"` set to `key = {value}`
/// (or removed when `value` is None).
fn edit(text: &str, id: &str, key: &str, value: Option<&str>) -> String {
    let at = text
        .find(&format!("id = \"{id}\"\n"))
        .unwrap_or_else(|| panic!("no {id}"));
    let line = at
        + text[at..]
            .find(&format!("\n{key} = "))
            .unwrap_or_else(|| panic!("no {key} after {id}"))
        + 1;
    let end = line + text[line..].find('\n').expect("line end") + 1;
    let new = value.map_or(String::new(), |v| format!("{key} = {v}\n"));
    format!("{}{new}{}", &text[..line], &text[end..])
}

/// Loads the catalog with `gpus.toml` / `offers.toml` as given and compares the
/// problems found, as "file: key".
fn check(gpus: &str, offers: &str, expected: &[&str]) {
    let got: Vec<String> = match catalog_with(Some(gpus), Some(offers)) {
        Ok(_) => Vec::new(),
        Err(problems) => problems
            .iter()
            .map(|p| format!("{}: {}", p.file, p.key))
            .collect(),
    };
    assert_eq!(got, expected);
}

#[test]
fn the_shipped_catalog_loads() {
    check(GPUS, OFFERS, &[]);
}

#[test]
fn card_flags_must_agree_with_the_specs() {
    // A card without BF16 cannot train, so it serves only.
    let g = edit(GPUS, "t4", "serving_only", Some("false"));
    check(&g, OFFERS, &["gpus.toml: gpu[t4].serving_only"]);
    let g = edit(GPUS, "rtx4090", "serving_only", Some("false"));
    check(&g, OFFERS, &["gpus.toml: gpu[rtx4090].serving_only"]);
    // The A100 has no FP8: not the flagship whose rental for serving is a pitfall.
    let g = edit(GPUS, "a100-80g", "training_flagship", Some("true"));
    check(&g, OFFERS, &["gpus.toml: gpu[a100-80g].training_flagship"]);
    // The H200 may be marked a flagship: it has what one needs.
    let g = edit(GPUS, "h200", "training_flagship", Some("true"));
    check(&g, OFFERS, &[]);
}

#[test]
fn a_missing_flag_is_reported_with_its_line() {
    let g = edit(GPUS, "a100-40g", "consumer", None);
    let problems = catalog_with(Some(&g), None).expect_err("missing field");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].file, "gpus.toml");
    assert!(problems[0].message.contains("consumer"), "{problems:?}");
}

#[test]
fn every_problem_is_reported_at_once() {
    let g = edit(GPUS, "t4", "memory_gb", Some("0"));
    let g = edit(&g, "v100s-32g", "serving_only", Some("false"));
    let o = edit(OFFERS, "rtx3090", "gpu", Some("\"rtx-3090\""));
    check(
        &g,
        &o,
        &[
            "gpus.toml: gpu[t4].memory_gb",
            "gpus.toml: gpu[v100s-32g].serving_only",
            "offers.toml: offer[rtx3090].gpu",
        ],
    );
}

#[test]
fn a_bare_card_name_rents_its_per_card_offer() {
    let cat = &advisor().catalog;
    let offer = |g: &str| cat.offer_for_gpu(g).map(|o| o.id.as_str());
    assert_eq!(offer("a100-80g"), Some("a100-80g-x8"));
    assert_eq!(offer("a16"), Some("a16-slice-1-16"));
    assert_eq!(offer("no-such-card"), None);
}

#[test]
fn a_synonym_must_be_one_gram_of_the_router() {
    use super::CatalogSources;
    use crate::advisor::catalog::Catalog;
    use crate::advisor::fixtures::{BILLING, MODELS, TOPICS};
    let topics = TOPICS.replacen(
        "synonyms = [\n",
        "synonyms = [\n  [\"宕机\", \"goes down\", \"服务器宕\", \"Crash\"],\n",
        1,
    );
    let problems = Catalog::build(&CatalogSources {
        gpus: GPUS,
        offers: OFFERS,
        models: MODELS,
        topics: &topics,
        billing: BILLING,
    })
    .expect_err("two words, three characters and a capital are refused");
    let keys: Vec<String> = problems.iter().map(|p| p.key.clone()).collect();
    assert_eq!(
        keys,
        [
            "synonyms[0]: \"goes down\"",
            "synonyms[0]: \"服务器宕\"",
            "synonyms[0]: \"Crash\""
        ]
    );
}

/// The problems of the catalog with `models` in place of models.toml.
fn model_problems(models: &str) -> Vec<super::Problem> {
    use super::CatalogSources;
    use crate::advisor::catalog::Catalog;
    use crate::advisor::fixtures::{BILLING, TOPICS};
    Catalog::build(&CatalogSources {
        gpus: GPUS,
        offers: OFFERS,
        models,
        topics: TOPICS,
        billing: BILLING,
    })
    .expect_err("the changed models are refused")
}

#[test]
fn a_release_month_is_checked() {
    use crate::advisor::fixtures::MODELS;
    // A month 13 and a month in words are refused.
    let models = MODELS
        .replacen("released = \"2024-09\"", "released = \"2024-13\"", 1)
        .replacen("released = \"2025-04\"", "released = \"April 2025\"", 1);
    let problems = model_problems(&models);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|p| p.message == "must be YYYY-MM"));
}

#[test]
fn a_nickname_is_one_lowercase_word_of_one_model() {
    use crate::advisor::fixtures::MODELS;
    // A nickname of two models and one with a space are refused.
    let models = MODELS
        .replacen("nicknames = [\"v3\"]", "nicknames = [\"r1\"]", 1)
        .replacen("nicknames = [\"k2\"]", "nicknames = [\"K 2\"]", 1);
    let problems = model_problems(&models);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().all(|p| p.key.contains("nicknames")),
        "{problems:?}"
    );
}
