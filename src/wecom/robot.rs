//! The WeCom group robot webhook: the rest of a long reply is pushed as markdown
//! messages, in the background and within the robot's rate.

use crate::app::ratelimit::Buckets;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A robot markdown message holds at most this many bytes.
pub const ROBOT_MAX_BYTES: usize = 4096;
/// The robot webhook accepts 20 messages a minute.
pub const ROBOT_PER_MIN: f64 = 20.0;
/// At most this many robot URLs are rate-limited at once.
const ROBOTS: usize = 1_000;

/// Pushes to robot webhooks, each URL within its rate.
pub struct Robot {
    client: reqwest::Client,
    limit: tokio::sync::Mutex<Buckets>,
    started: Instant,
}

impl Robot {
    pub fn new(client: reqwest::Client) -> Arc<Robot> {
        Arc::new(Robot {
            client,
            limit: tokio::sync::Mutex::new(Buckets::new(ROBOT_PER_MIN, ROBOT_PER_MIN, ROBOTS)),
            started: Instant::now(),
        })
    }

    /// Sends `parts` to `url` in the background, in order, within the robot's rate.
    pub fn push(self: &Arc<Self>, url: String, parts: Vec<String>) {
        let robot = Arc::clone(self);
        tokio::spawn(async move {
            for part in parts {
                loop {
                    let wait = robot
                        .limit
                        .lock()
                        .await
                        .take(&url, robot.started.elapsed().as_secs_f64());
                    match wait {
                        Ok(()) => break,
                        Err(secs) => {
                            tokio::time::sleep(Duration::from_secs_f64(secs.min(60.0))).await
                        }
                    }
                }
                let body =
                    serde_json::json!({"msgtype": "markdown", "markdown": {"content": part}});
                match robot.client.post(&url).json(&body).send().await {
                    Ok(r) if r.status().is_success() => {}
                    Ok(r) => tracing::warn!(status = %r.status(), "wecom robot push refused"),
                    Err(e) => tracing::warn!(error = %e, "wecom robot push failed"),
                }
            }
        });
    }
}
