//! The advisor core: pure and synchronous. Question text and conversation state in,
//! answer and new state out. It does no IO and names no runtime, network or platform
//! crate (a test enforces it); data arrives as text from the caller.

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
