//! gpu-advisor answers GPU-rental questions in chat. The layers, from the inside out:
//!
//! - [`advisor`]: the core, pure and synchronous: question text and conversation state
//!   in, answer and new state out (parse → intent → workload → estimate → recommend →
//!   answer → reply).
//! - [`store`]: the conversation store port and its backends (memory, Redis).
//! - [`app`]: the only way in for every channel: [`app::Chat::handle`] with addressing,
//!   commands, dedupe, rate limits, metrics, the misses log and the swappable advisor.
//! - [`render`]: the neutral reply as each platform shows it, and one splitter.
//! - adapters, each turning its platform's payloads into [`app::Inbound`] and outcomes
//!   back, and importing no other adapter: [`http`] (routes), [`telegram`], [`discord`],
//!   [`wecom`].
//! - [`server`]: builds the services from the settings and runs them.
//!
//! [`config`] holds the settings, [`data`] loads catalog/ and intents/.

pub mod advisor;
pub mod app;
pub mod config;
pub mod data;
pub mod discord;
pub mod http;
pub mod render;
pub mod server;
pub mod store;
pub mod telegram;
pub mod wecom;
