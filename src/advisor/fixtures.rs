//! The shipped catalog and intents, compiled into the unit tests (`include_str!`, no IO),
//! and an advisor built from them or from an edited copy.

use super::catalog::{Catalog, CatalogSources, Problem};
use super::lexicon::Lexicon;
use super::workload::{Asked, Precision, Task, Workload};
use super::Advisor;
use std::sync::OnceLock;

pub const GPUS: &str = include_str!("../../catalog/gpus.toml");
pub const OFFERS: &str = include_str!("../../catalog/offers.toml");
pub const MODELS: &str = include_str!("../../catalog/models.toml");
pub const TOPICS: &str = include_str!("../../catalog/topics.toml");
pub const BILLING: &str = include_str!("../../catalog/billing.toml");
pub const CUES: &str = include_str!("../../intents/cues.toml");
pub const SLOTS: &str = include_str!("../../intents/slots.toml");
pub const NORMALISE: &str = include_str!("../../intents/normalise.toml");
pub const FOLLOWUPS: &str = include_str!("../../intents/followups.toml");

/// The catalog from these texts (the shipped ones where `None`).
pub fn catalog_with(gpus: Option<&str>, offers: Option<&str>) -> Result<Catalog, Vec<Problem>> {
    Catalog::build(&CatalogSources {
        gpus: gpus.unwrap_or(GPUS),
        offers: offers.unwrap_or(OFFERS),
        models: MODELS,
        topics: TOPICS,
        billing: BILLING,
    })
}

pub fn lexicon() -> Lexicon {
    Lexicon::build(&[
        ("cues.toml", CUES),
        ("slots.toml", SLOTS),
        ("normalise.toml", NORMALISE),
        ("followups.toml", FOLLOWUPS),
    ])
    .expect("intents build")
}

/// The advisor of the shipped data, built once for all tests.
pub fn advisor() -> &'static Advisor {
    static A: OnceLock<Advisor> = OnceLock::new();
    A.get_or_init(|| Advisor::new(catalog_with(None, None).expect("catalog"), lexicon()))
}

/// The workload of a catalog model for `task`, with the defaults filled in.
pub fn workload(model: &str, task: Task, precision: Option<Precision>) -> Workload {
    let asked = Asked {
        model: Some(model.into()),
        task: Some(task),
        precision,
        ..Asked::default()
    };
    Workload::resolve(&asked, &advisor().catalog).expect("workload")
}
