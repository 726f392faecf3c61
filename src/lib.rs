//! gpu-advisor: answers GPU-rental questions in chat. `advisor` is the pure core; `data`
//! loads its files; `config` the settings; `http` is the axum server with the WeCom
//! callback; `wecom` its crypto; `store` and `ratelimit` the shared state.

pub mod advisor;
pub mod app;
pub mod config;
pub mod data;
pub mod discord;
pub mod http;
pub mod live;
pub mod metrics;
pub mod ratelimit;
pub mod redis_store;
pub mod render;
pub mod report;
pub mod store;
pub mod telegram;
pub mod wecom;
