//! Knowledge topics a question touches: every trigger word of `topics.toml` in one
//! automaton, each topic scored by the summed length of its distinct triggers found.

use crate::advisor::catalog::Catalog;

/// The catalog's topic triggers, compiled.
pub struct Triggers {
    /// Every topic trigger in one automaton; `trigger_topic[i]` is pattern i's topic.
    triggers: aho_corasick::AhoCorasick,
    trigger_topic: Vec<usize>,
    topic_ids: Vec<String>,
}

impl Triggers {
    pub fn new(cat: &Catalog) -> Triggers {
        let mut patterns = Vec::new();
        let mut trigger_topic = Vec::new();
        for (ti, t) in cat.topics.iter().enumerate() {
            for trig in &t.triggers {
                patterns.push(trig.to_lowercase());
                trigger_topic.push(ti);
            }
        }
        let triggers = aho_corasick::AhoCorasick::new(&patterns).expect("trigger automaton builds");
        let topic_ids = cat.topics.iter().map(|t| t.id.clone()).collect();
        Triggers {
            triggers,
            trigger_topic,
            topic_ids,
        }
    }

    /// Topic ids by descending score (ties in catalog order).
    pub fn topics(&self, text: &str) -> Vec<String> {
        let mut seen = vec![false; self.trigger_topic.len()];
        let mut score = vec![0usize; self.topic_ids.len()];
        for m in self.triggers.find_overlapping_iter(text) {
            let pi = m.pattern().as_usize();
            if !std::mem::replace(&mut seen[pi], true) {
                score[self.trigger_topic[pi]] += text[m.start()..m.end()].chars().count();
            }
        }
        let mut scored: Vec<(usize, usize)> = score
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0)
            .collect();
        scored.sort_by_key(|(i, s)| (std::cmp::Reverse(*s), *i));
        scored
            .into_iter()
            .map(|(i, _)| self.topic_ids[i].clone())
            .collect()
    }
}
