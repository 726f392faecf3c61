//! What one turn works from: the catalog, the parsed question, the merged `Asked`, the
//! resolved workload and the search limits, handed to every answer module. A value only.

use super::snippets::Snippets;
use crate::advisor::catalog::Catalog;
use crate::advisor::parse::{Lang, Parsed};
use crate::advisor::recommend::Limits;
use crate::advisor::workload::{Asked, Workload};

/// Everything one turn works from, handed to the reply composer.
pub struct Context<'a> {
    pub cat: &'a Catalog,
    pub snippets: &'a Snippets,
    pub lang: Lang,
    pub parsed: &'a Parsed,
    pub asked: &'a Asked,
    pub workload: Option<Workload>,
    pub limits: Limits,
    pub followup: bool,
}
