//! The integration tests, one binary (one link instead of one per file). Shared pieces —
//! free ports, the fake platform servers' plumbing, Tencent's WeCom sample vectors — live
//! in `support/`, which the fuzz targets include too.
//!
//! - `answers`: answers end to end through the core, golden replies
//! - `cli`: the binary's command-line contract
//! - `data`: the shipped catalog and intents, and how broken files are reported
//! - `deploy`: the deployment manifests against the variables the code reads
//! - `discord`: the Discord adapter against a fake Discord API
//! - `http`: the HTTP server, `/v1/ask`, metrics, OpenAPI, the WeCom callback
//! - `models`: adding a model with `model import`, then asking about it
//! - `properties`: properties of the core (proptest)
//! - `purity`: the core names no IO, runtime or platform crate
//! - `reload`: hot reload and shutdown of the real `serve` process
//! - `robustness`: the fuzz targets' properties as proptests
//! - `store`: one contract suite for the store port, memory and Redis
//! - `telegram`: the Telegram adapter against a fake Bot API

mod support;

mod answers;
mod cli;
mod data;
mod deploy;
mod discord;
mod http;
mod models;
mod properties;
mod purity;
mod reload;
mod robustness;
mod store;
mod telegram;
