//! gpu-advisor: answers GPU-rental questions in chat. `advisor` is the pure core;
//! `data` loads its files; `http` is the axum server.

pub mod advisor;
pub mod data;
pub mod http;
pub mod wecom;
