//! Knowledge topics a question touches, two ways, both compiled once from `topics.toml`:
//!
//! 1. triggers: every trigger word in one automaton, each topic scored by the summed
//!    length of its distinct triggers found (a trigger is a sure sign);
//! 2. examples: without a trigger, the question's grams (character bigrams of Chinese,
//!    words of English, lowercased, a plural `s` dropped) are scored against each topic's
//!    example questions and triggers: the share of the question's information (grams
//!    weighted by inverse topic frequency, a gram no topic has counting fully against)
//!    the topic covers. The best topic above [`THRESHOLD`] is the answer; below it, the
//!    nearest ones are offered by the help reply.

use crate::advisor::catalog::Catalog;
use std::collections::HashMap;

/// The share of a question's information a topic's examples must cover to answer it,
/// and how far ahead of the next topic it must be. Set on the project's own corpora
/// (tests/corpus/probe.jsonl and outsider-a.jsonl): reworded FAQ questions cover 0.2–0.4
/// of their topic and clearly less of any other.
pub const THRESHOLD: f64 = 0.2;
pub const MARGIN: f64 = 1.1;
/// Below the threshold, topics above this share are named as the nearest ones.
pub const NEAR: f64 = 0.1;

/// The catalog's topic triggers and examples, compiled.
pub struct Triggers {
    /// Every topic trigger in one automaton; `trigger_topic[i]` is pattern i's topic.
    triggers: aho_corasick::AhoCorasick,
    trigger_topic: Vec<usize>,
    topic_ids: Vec<String>,
    /// For each gram of any topic's examples: the topics that have it.
    grams: HashMap<String, Vec<usize>>,
}

/// Topics by score, best first: what the router found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Routed {
    /// Topic ids the question is about.
    pub topics: Vec<String>,
    /// Nearest topic ids when none is sure (for the help reply).
    pub near: Vec<String>,
}

impl Triggers {
    pub fn new(cat: &Catalog) -> Triggers {
        let mut patterns = Vec::new();
        let mut trigger_topic = Vec::new();
        let mut grams: HashMap<String, Vec<usize>> = HashMap::new();
        for (ti, t) in cat.topics.iter().enumerate() {
            for trig in &t.triggers {
                patterns.push(trig.to_lowercase());
                trigger_topic.push(ti);
            }
            for text in t.examples.iter().chain(&t.triggers) {
                for (g, _) in grams_of(&text.to_lowercase()) {
                    let list = grams.entry(g.to_string()).or_default();
                    if list.last() != Some(&ti) {
                        list.push(ti);
                    }
                }
            }
        }
        let triggers = aho_corasick::AhoCorasick::new(&patterns).expect("trigger automaton builds");
        let topic_ids = cat.topics.iter().map(|t| t.id.clone()).collect();
        Triggers {
            triggers,
            trigger_topic,
            topic_ids,
            grams,
        }
    }

    /// Topic ids by descending score (ties in catalog order); `text` is normalised.
    /// Examples are scored only for a question that states no workload (`examples`):
    /// "4090 能跑 70B 吗" is a feasibility question even if a pitfall's example is alike.
    pub fn route(&self, text: &str, examples: bool) -> Routed {
        let mut by_trigger = self.by_trigger(text);
        if !examples {
            return Routed {
                topics: by_trigger,
                near: Vec::new(),
            };
        }
        let scored = self.by_example(text);
        if !by_trigger.is_empty() {
            // A trigger is a sure sign, unless the examples of another topic cover the
            // question far better ("带宽超了怎么收钱" is about fees, not the network).
            let share = |id: &str| {
                scored
                    .iter()
                    .find(|(i, _)| self.topic_ids[*i] == id)
                    .map_or(0.0, |(_, s)| *s)
            };
            if let Some(&(i, s)) = scored.first() {
                let best = &self.topic_ids[i];
                if s >= THRESHOLD && *best != by_trigger[0] && s >= 2.0 * share(&by_trigger[0]) {
                    by_trigger.retain(|t| t != best);
                    by_trigger.insert(0, best.clone());
                }
            }
            return Routed {
                topics: by_trigger,
                near: Vec::new(),
            };
        }
        let mut out = Routed::default();
        match scored.first() {
            Some(&(i, s))
                if s >= THRESHOLD && scored.get(1).is_none_or(|&(_, t)| s >= MARGIN * t) =>
            {
                out.topics.push(self.topic_ids[i].clone())
            }
            _ => {
                out.near = scored
                    .iter()
                    .take_while(|(_, s)| *s >= NEAR)
                    .take(3)
                    .map(|(i, _)| self.topic_ids[*i].clone())
                    .collect();
            }
        }
        out
    }

    fn by_trigger(&self, text: &str) -> Vec<String> {
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

    /// Each topic's share of the question's information, best first.
    pub fn by_example(&self, text: &str) -> Vec<(usize, f64)> {
        let n = self.topic_ids.len() as f64;
        let mut grams = grams_of(text);
        grams.sort_unstable_by(|a, b| a.0.cmp(b.0));
        grams.dedup_by(|a, b| a.0 == b.0);
        let mut total = 0.0;
        let mut score = vec![0.0; self.topic_ids.len()];
        for (g, weight) in &grams {
            let topics = self.grams.get(*g);
            let df = topics.map_or(0, |t| t.len()) as f64;
            let idf = weight * ((n + 1.0) / (df + 1.0)).ln();
            total += idf;
            for &t in topics.into_iter().flatten() {
                score[t] += idf;
            }
        }
        if total <= 0.0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f64)> = score
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i, s / total))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.partial_cmp(&a.1).expect("finite").then(a.0.cmp(&b.0)));
        scored
    }
}

/// English words too common to tell topics apart.
const STOP: &[&str] = &[
    "a", "an", "the", "is", "are", "am", "be", "do", "does", "did", "i", "we", "you", "my", "our",
    "your", "it", "its", "to", "of", "in", "on", "for", "and", "or", "if", "what", "how", "can",
    "will", "would", "should", "there", "this", "that", "with", "me", "us", "any", "at", "after",
    "right", "so", "get", "just",
];

/// Chinese words too common to tell topics apart (as bigrams).
const STOP_ZH: &[&str] = &[
    "什么", "怎么", "你们", "我们", "是不", "不是", "会不", "不会", "能不", "不能", "一下", "可以",
    "有没", "没有", "的话", "一个", "这个", "那个",
];

/// Chinese characters too common to tell topics apart (as single characters).
const STOP_CHAR: &str = "的了吗呢吧啊是我你他们在有和就都也要会能不这那个一么什怎啥";

/// How much a single Chinese character counts against a bigram (a bigram says more).
const CHAR_WEIGHT: f64 = 0.5;

/// An English word as a gram: not a stop word, a plural `s` dropped.
fn push_word<'t>(out: &mut Vec<(&'t str, f64)>, w: &'t str) {
    if w.len() > 1 && !STOP.contains(&w) {
        let w = if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
            &w[..w.len() - 1]
        } else {
            w
        };
        out.push((w, 1.0));
    }
}

/// The grams of a normalised text with their weights: bigrams of each run of Chinese
/// characters (1) and its characters ([`CHAR_WEIGHT`]), English words (1, a plural `s`
/// dropped). Slices of `text`: nothing is allocated but the list.
fn grams_of(text: &str) -> Vec<(&str, f64)> {
    let mut out = Vec::new();
    // Where the previous Chinese character of the run starts (for bigrams), and where
    // the current ASCII word starts.
    let mut han: Option<usize> = None;
    let mut word: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if ('\u{4e00}'..='\u{9fff}').contains(&c) {
            if let Some(w) = word.take() {
                push_word(&mut out, &text[w..i]);
            }
            if !STOP_CHAR.contains(c) {
                out.push((&text[i..end], CHAR_WEIGHT));
            }
            if let Some(prev) = han {
                let g = &text[prev..end];
                if !STOP_ZH.contains(&g) {
                    out.push((g, 1.0));
                }
            }
            han = Some(i);
        } else {
            han = None;
            if c.is_ascii_alphanumeric() {
                word.get_or_insert(i);
            } else if let Some(w) = word.take() {
                push_word(&mut out, &text[w..i]);
            }
        }
    }
    if let Some(w) = word {
        push_word(&mut out, &text[w..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advisor::fixtures::advisor;

    /// The topics (or, after `~`, the nearest ones) `question` is routed to.
    fn check(question: &str, expected: &str) {
        let t = Triggers::new(&advisor().catalog);
        let text = advisor().parser.lexicon().normalise(question);
        let r = t.route(&text, true);
        let got = if r.topics.is_empty() {
            format!("~{}", r.near.join(","))
        } else {
            r.topics.join(",")
        };
        assert_eq!(got, expected, "{question:?}");
    }

    #[test]
    fn a_trigger_routes_at_once() {
        check("NVLink 是什么", "nvlink");
        // Unless another topic's examples cover the question far better.
        check("带宽超了怎么收钱", "hidden-fees,network");
    }

    #[test]
    fn reworded_questions_route_by_examples() {
        check("服务器挂了怎么办", "migration");
        check("合同签了一年中途不用了能退吗", "pitfall-annual-contract");
        check(
            "What do I check right after the box is handed over?",
            "checklist",
        );
    }

    #[test]
    fn grams_are_bigrams_and_words() {
        let grams: Vec<&str> = grams_of("显存 cards 够").into_iter().map(|g| g.0).collect();
        assert_eq!(grams, vec!["显", "存", "显存", "card", "够"]);
    }
}
