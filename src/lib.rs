//! gpu-advisor: answers GPU-rental questions in chat. `advisor` is the pure core; `data`
//! loads its files; `config` the settings; `http` is the axum server with the WeCom
//! callback; `wecom` its crypto; `store` and `ratelimit` the shared state.

pub mod advisor;
pub mod config;
pub mod data;
pub mod http;
pub mod ratelimit;
pub mod report;
pub mod store;
pub mod wecom;
