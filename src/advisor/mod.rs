//! The advisor core: pure and synchronous. Question text and conversation state in,
//! answer and new state out. It does no IO and names no runtime, network or platform
//! crate (a test enforces it); data arrives as text from the caller.
//!
//! The pipeline, stage by stage:
//!
//! ```text
//! catalog, lexicon (+ numerals)   data loaded raw → validated
//! parse/    entities, slots, topics   question → Asked, cues, topics
//! intent    the kind of answer; a follow-up laid over the last turn
//! workload  defaults filled, architecture resolved
//! estimate/ memory, kv, training, speed: the bill
//! recommend (+ search)   the cheapest configuration that fits
//! contract  the answer's JSON types
//! answer/   recommendation, price, compare, budget, topics, help; describe, snippets
//! reply     neutral blocks, markdown, number formats
//! ```
//!
//! No two of these modules import each other (a submodule uses its parent's types, its
//! parent calls it). Later stages read earlier ones; `parse::Lang` and `workload`'s types
//! are shared by all, and `contract` shapes what `answer` composes.

pub mod answer;
pub mod catalog;
pub mod contract;
pub mod estimate;
pub mod intent;
pub mod lexicon;
pub mod numerals;
pub mod parse;
pub mod recommend;
pub mod reply;
pub mod workload;

#[cfg(test)]
mod fixtures;

pub use answer::{Advisor, Answer, Intent, State};
