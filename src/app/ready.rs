//! Readiness: the parts that must be up before a replica takes traffic (a chat adapter
//! whose platform API has answered its start-up calls). `/readyz` answers 503 while any
//! registered part is not ready; `/healthz` says only that the process serves.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Every registered part and whether it is ready.
#[derive(Default)]
pub struct Readiness {
    parts: Mutex<Vec<(&'static str, Ready)>>,
}

/// One part's flag, set once it is up.
#[derive(Clone, Default)]
pub struct Ready(Arc<AtomicBool>);

impl Ready {
    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl Readiness {
    /// Registers a part, not ready yet.
    pub fn part(&self, name: &'static str) -> Ready {
        let ready = Ready::default();
        self.parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name, ready.clone()));
        ready
    }

    /// The parts not ready yet, by name.
    pub fn pending(&self) -> Vec<&'static str> {
        self.parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, r)| !r.is_set())
            .map(|(n, _)| *n)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_when_every_part_is() {
        let r = Readiness::default();
        assert!(r.pending().is_empty());
        let tg = r.part("telegram");
        let dc = r.part("discord");
        assert_eq!(r.pending(), ["telegram", "discord"]);
        tg.set();
        assert_eq!(r.pending(), ["discord"]);
        dc.set();
        assert!(r.pending().is_empty());
    }
}
