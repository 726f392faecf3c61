//! Knowledge topics a question touches, two ways, both compiled once from `topics.toml`:
//!
//! 1. triggers: every trigger word in one automaton, each topic scored by the summed
//!    length of its distinct triggers found, a Chinese character as four letters (a
//!    trigger is a sure sign);
//! 2. examples: without a trigger, and only for a question that states no workload
//!    ([`examples_apply`]), the question's grams (character bigrams and characters of
//!    Chinese, stems of English words, each synonym as its group's first word) are scored
//!    against each topic's example questions and triggers: the share of the question's
//!    information (grams weighted by inverse topic frequency, a gram no topic has counting
//!    fully against) the topic covers. The best topic above [`THRESHOLD`] and [`MARGIN`]
//!    ahead of the next is the answer; below it, the nearest ones are offered by the help
//!    reply. [`Triggers::leave_one_out`] measures how well the examples stand for each
//!    other (the threshold's calibration, `gpu-advisor check`).

use super::Parsed;
use crate::advisor::catalog::{Catalog, TopicAbout};
use crate::advisor::lexicon::Cue;
use crate::advisor::lexicon::Names;
/// Tables built once from the catalog and intents/, read per question: FxHash (`Names`).
type HashMap<K, V> = std::collections::HashMap<K, V, Names>;

/// The share of a question's information a topic's examples must cover to answer it,
/// and how far ahead of the next topic it must be (a tie is no answer). Calibrated on
/// `topics.toml` alone, by leave-one-out (`tests::calibrate`): every example routed with
/// itself left out of the index, against the single-turn questions of tests/corpus that
/// want another answer (a recommendation, verdict, comparison, budget, price, help or
/// not-understood reply) and that the examples may route at all ([`examples_apply`]).
/// 0.24 is the lowest threshold at which none of those routes to a topic; BENCHMARKS.md
/// ("FAQ routing by examples") has the table.
pub const THRESHOLD: f64 = 0.24;
pub const MARGIN: f64 = 1.05;
/// A topic's examples must share at least this much with a question (a word or bigram
/// counts 1, a character [`CHAR_WEIGHT`]): one shared word ("help") is no evidence.
pub const MIN_MATCH: f64 = 1.5;
/// Below the threshold, the nearest topics are named when the best covers this share:
/// above what the not-understood questions of tests/corpus reach ("你们老板电话多少" 0.13,
/// "明天公司团建去哪" 0.15), below a near miss such as "先试用两天，满意了再付钱可以吗"
/// (billing and slices).
pub const NEAR: f64 = 0.16;
/// A question says something besides its trigger words when at least this many letters
/// or Han characters are left ("NVLink 有必要吗" leaves one, 必): only then can a topic its
/// examples cover well join the trigger's.
const SECOND_SUBJECT_CHARS: usize = 8;
/// A question of a message of several is routed alone when it has at least this many
/// letters or Han characters ("hi!" and "谢谢。" are not questions).
const MIN_QUESTION_CHARS: usize = 5;

/// Whether the example questions may route a question: only one that states no workload
/// (no model or size, no model the catalog does not know, and none of the numbers that
/// describe a workload: concurrency, context, batch, data size; no size refused as
/// impossible, "-7B 模型推理"), no budget, at most one
/// card (two cards are a comparison) and no price of a card (a price cue or a rental
/// period with a card: "T4 租三个月多少"), and no change to the last turn ("降到 3000 呢"). "4090 能训练 70B 吗" is a feasibility question
/// however alike a pitfall's example is; a pitfall it clearly is still comes through its
/// triggers.
pub fn examples_apply(p: &Parsed) -> bool {
    let a = &p.asked;
    !a.has_workload()
        && p.invalid.is_none()
        && p.unknown_model.is_none()
        && !((p.cue(Cue::Price) || a.months.is_some()) && !a.gpus.is_empty())
        && a.budget_cny.is_none()
        && a.gpus.len() < 2
        && a.concurrency.is_none()
        && a.context.is_none()
        && a.micro_batch.is_none()
        && a.train_tokens.is_none()
        && a.budget_change.is_none()
        && a.concurrency_change.is_none()
        && a.scaled.is_none()
        && a.changed_to.is_none()
}

/// Whether a question with a workload states it as the background of another question:
/// something the customer sees ("vllm 一启动显存就被占了 90% 多，模型才 14B，这正常吗": a
/// diagnostic cue and no cue of another question: what to rent, can it run, the price, a
/// comparison), or the disk it needs ("How much disk do I need for a few 70B
/// checkpoints?": its "how much" and "need" are the disk's, so only a question with no
/// word for the cards at all, `card_word`: the `card.word` slot, nor a card). A diagnosis
/// may name the card it runs on ("24G 显存占满了"); neither comes with a budget. The
/// examples then route it like a question with no workload, and an FAQ it reaches is the
/// answer (`intent.rs`).
pub fn workload_is_background(p: &Parsed, card_word: bool) -> bool {
    let a = &p.asked;
    let other = |cues: &[Cue]| cues.iter().any(|&c| p.cue(c));
    // A comparison needs two cards: "leak or expected??" sets nothing against each other.
    // A speed or a first-token time seen on a named card and model ("single-stream decode is
    // only 19 tok/s … is that normal?", "TTFT 要 15 秒左右，正常吗") is measured against
    // the estimate for that configuration, which the serving block gives.
    let speed_seen = (a.serving.speed_target.is_some() || a.serving.ttft_target_s.is_some())
        && !a.gpus.is_empty()
        && (a.model.is_some() || a.size_b.is_some());
    let asks_other = speed_seen
        || other(&[Cue::Recommend, Cue::Feasibility, Cue::Price, Cue::Budget])
        || p.cue(Cue::Compare) && a.gpus.len() >= 2;
    let diagnostic = p.cue(Cue::Diagnostic) && !asks_other;
    let disk = (p.cue(Cue::StorageAsk) && !other(&[Cue::Feasibility]) || p.cue(Cue::StorageFit))
        && !card_word
        && !other(&[Cue::Compare, Cue::Budget]);
    // "这种用法有没有问题", "要不要降配": about the rental itself, whatever else it names.
    let usage = p.cue(Cue::UsageQuestion) && !p.cue(Cue::CountAsk);
    // "H100 跑 7B 是不是浪费": the card's fit to the job, unless a load is given to size
    // ("200 concurrent users … is H100 overkill?") or the question also asks "能跑吗".
    let load =
        a.concurrency.is_some() || a.serving.daily_users.is_some() || a.serving.qps.is_some();
    let overkill = p.cue(Cue::Overkill) && !p.cue(Cue::Feasibility) && !load;
    // "H100 跑 7B 跟 3090 其实差不多快吧？": a belief about cards put for confirmation, the
    // topic's; a belief about one card ("Gemma 3 27B should fit on a single 4090, right?")
    // is its verdict.
    let belief = p.cue(Cue::BeliefConfirm) && !asks_other && !load && a.gpus.len() != 1;
    // "Why do MoE models like Qwen3-235B-A22B still need VRAM for all 235B params?": the
    // model is the example of a question about memory itself.
    // "显存到底怎么估算？看到说1B参数fp32要4G，有没有公式": how memory is worked out, unless
    // a configuration is asked beside it ("What GPU setup do I need…? Is there a formula…").
    let formula = p.cue(Cue::ExplainFormula) && !p.cue(Cue::Recommend);
    let explain =
        (p.cue(Cue::Explain) || formula) && !p.cue(Cue::Feasibility) && a.gpus.is_empty() && !load;
    (diagnostic || usage || overkill || belief || explain || (disk && a.gpus.is_empty()))
        && a.budget_cny.is_none()
}

/// The clauses of a message, as byte ranges, each with the mark that ends it: split after
/// `?`, `!`, `;`, `。`, a full stop before a space, and after a comma next to a Chinese character ("原始语料大概 2TB，
/// 存储怎么配？" is two clauses; "Besides the GPU rent, are there setup fees?" one: an
/// English comma joins a sentence's parts).
pub fn clauses(text: &str) -> Vec<(usize, usize)> {
    let han = |c: Option<char>| c.is_some_and(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let mut out = Vec::new();
    let mut from = 0;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let split = match c {
            '?' | '!' | ';' | '。' => true,
            // A full stop ends an English sentence; "Qwen2.5-7B" and "v0.3" go on.
            '.' => text[end..].chars().next().is_none_or(char::is_whitespace),
            ',' => {
                let before = text[..i].trim_end().chars().next_back();
                let after = text[end..].trim_start().chars().next();
                han(before) || han(after)
            }
            _ => false,
        };
        if split {
            out.push((from, end));
            from = end;
        }
    }
    if !text[from..].trim().is_empty() {
        out.push((from, text.len()));
    }
    out
}

/// Whether a clause asks: it ends with a question mark, or with 吗, 呢 or 么.
pub fn clause_asks(clause: &str) -> bool {
    let c = clause.trim_end_matches(['.', '。', '!', ' ', ',']);
    c.ends_with(['?', '吗', '呢', '么'])
}

/// The catalog's topic triggers and examples, compiled.
pub struct Triggers {
    /// Every topic trigger in one automaton; `trigger_topic[i]` is pattern i's topic.
    triggers: aho_corasick::AhoCorasick,
    trigger_topic: Vec<usize>,
    topic_ids: Vec<String>,
    /// What each topic's question is about (`topics.toml` `about`).
    topic_about: Vec<TopicAbout>,
    /// For each gram of any topic's examples and triggers: the topics that have it, each
    /// with the number of its texts that have it (so one example can be left out).
    grams: HashMap<String, Vec<(usize, u32)>>,
    /// Each gram's inverse topic frequency, `ln((topics + 1) / (topics with it + 1))`,
    /// computed once (with an example left out it is computed again).
    idf: HashMap<String, f64>,
    /// A synonym's gram to the gram of its group's first word.
    synonyms: HashMap<String, String>,
}

/// One example left out of the index: its topic and its grams.
struct Skip<'a> {
    topic: usize,
    grams: Vec<&'a str>,
}

/// Topics by score, best first: what the router found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Routed {
    /// Topic ids the question is about.
    pub topics: Vec<String>,
    /// Nearest topic ids when none is sure (for the help reply).
    pub near: Vec<String>,
    /// The topics are two the examples cover equally well, neither ahead.
    pub tie: bool,
}

impl Triggers {
    pub fn new(cat: &Catalog) -> Triggers {
        let mut patterns = Vec::new();
        let mut trigger_topic = Vec::new();
        let mut synonyms = HashMap::default();
        for group in &cat.topic_synonyms {
            // The word's own gram: its bigram or stem, not one of its characters.
            let gram = |w: &String| {
                grams_of(w)
                    .into_iter()
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(g, _)| g.to_string())
            };
            let Some(head) = group.first().and_then(gram) else {
                continue;
            };
            for w in &group[1..] {
                if let Some(g) = gram(w).filter(|g| *g != head) {
                    synonyms.insert(g, head.clone());
                }
            }
        }
        let mut out = Triggers {
            triggers: aho_corasick::AhoCorasick::new(Vec::<String>::new())
                .expect("empty automaton builds"),
            trigger_topic: Vec::new(),
            topic_ids: cat.topics.iter().map(|t| t.id.clone()).collect(),
            topic_about: cat.topics.iter().map(|t| t.about).collect(),
            grams: HashMap::default(),
            idf: HashMap::default(),
            synonyms,
        };
        let mut grams: HashMap<String, Vec<(usize, u32)>> = HashMap::default();
        for (ti, t) in cat.topics.iter().enumerate() {
            for trig in &t.triggers {
                patterns.push(trig.to_lowercase());
                trigger_topic.push(ti);
            }
            for text in t.examples.iter().chain(&t.triggers) {
                let text = text.to_lowercase();
                for g in out.distinct_grams(&text) {
                    let list = grams.entry(g.to_string()).or_default();
                    match list.last_mut() {
                        Some((t, n)) if *t == ti => *n += 1,
                        _ => list.push((ti, 1)),
                    }
                }
            }
        }
        out.triggers = aho_corasick::AhoCorasick::new(&patterns).expect("trigger automaton builds");
        out.trigger_topic = trigger_topic;
        let n = out.topic_ids.len() as f64;
        out.idf = grams
            .iter()
            .map(|(g, list)| (g.clone(), idf(n, list.len() as f64)))
            .collect();
        out.grams = grams;
        out
    }

    /// The grams of a text ([`grams_of`]), each synonym read as its group's first word.
    fn grams<'a>(&'a self, text: &'a str) -> Vec<(&'a str, f64)> {
        let mut grams = grams_of(text);
        for (g, _) in &mut grams {
            if let Some(head) = self.synonyms.get(*g) {
                *g = head.as_str();
            }
        }
        grams
    }

    /// The distinct grams of a text, sorted.
    fn distinct_grams<'a>(&'a self, text: &'a str) -> Vec<&'a str> {
        let mut grams: Vec<&str> = self.grams(text).into_iter().map(|(g, _)| g).collect();
        grams.sort_unstable();
        grams.dedup();
        grams
    }

    /// Whether topic `ti`'s examples and triggers have every word and bigram of a
    /// trigger of topic `trigger_id` found in `text`.
    fn speaks_of_trigger(&self, ti: usize, text: &str, trigger_id: &str) -> bool {
        self.triggers.find_overlapping_iter(text).any(|m| {
            let pi = m.pattern().as_usize();
            self.topic_ids[self.trigger_topic[pi]] == trigger_id
                && self
                    .grams(&text[m.start()..m.end()])
                    .into_iter()
                    .filter(|&(_, w)| w >= 1.0)
                    .all(|(g, _)| {
                        self.grams
                            .get(g)
                            .is_some_and(|l| l.iter().any(|&(t, _)| t == ti))
                    })
        })
    }

    /// Topic ids by descending score (ties in catalog order); `text` is normalised.
    /// Examples are scored only for a question that states no workload (`examples`):
    /// "4090 能跑 70B 吗" is a feasibility question even if a pitfall's example is alike.
    pub fn route(&self, text: &str, examples: bool) -> Routed {
        self.route_skip(text, examples, None)
    }

    /// [`Self::route`] for a message of several questions, `breaks` where each ends: the
    /// topics of the whole, then the first topic of each question alone, in their order
    /// ("月缴跟年缴差多少？签年约要注意什么": billing, then the annual contract).
    /// What the topic `id` is about (cards when the id is unknown).
    pub fn about(&self, id: &str) -> TopicAbout {
        self.topic_ids
            .iter()
            .position(|t| t == id)
            .map_or(TopicAbout::Cards, |i| self.topic_about[i])
    }

    pub fn route_questions(&self, text: &str, breaks: &[usize], examples: bool) -> Routed {
        let mut whole = self.route(text, examples);
        let mut ends: Vec<usize> = breaks.to_vec();
        ends.push(text.len());
        ends.sort_unstable();
        let mut parts = Vec::new();
        let mut from = 0;
        for end in ends {
            if end < from || !text.is_char_boundary(end) {
                continue;
            }
            let part = &text[from..end];
            if part.chars().filter(|c| c.is_alphanumeric()).count() >= MIN_QUESTION_CHARS {
                parts.push(part);
            }
            from = end;
        }
        if parts.len() < 2 {
            return whole;
        }
        for part in parts {
            if let Some(t) = self.route(part, examples).topics.first() {
                if !whole.topics.contains(t) {
                    whole.topics.push(t.clone());
                }
            }
        }
        if !whole.topics.is_empty() {
            whole.near.clear();
        }
        whole
    }

    fn route_skip(&self, text: &str, examples: bool, skip: Option<&Skip<'_>>) -> Routed {
        let mut by_trigger = self.by_trigger(text);
        if !examples {
            return Routed {
                topics: by_trigger,
                near: Vec::new(),
                tie: false,
            };
        }
        let scored = self.scores(text, skip);
        if !by_trigger.is_empty() {
            // A trigger is a sure sign, unless the examples of another topic cover the
            // question far better and speak of the trigger's words too ("带宽超了怎么收钱"
            // is about fees, not the network; "NVLink 有必要吗" stays with NVLink however
            // much an upgrade question's "有必要吗" shares).
            let share = |id: &str| {
                scored
                    .iter()
                    .find(|(i, _)| self.topic_ids[*i] == id)
                    .map_or(0.0, |(_, s)| *s)
            };
            if let Some(&(i, s)) = scored.first() {
                let best = &self.topic_ids[i];
                if s >= THRESHOLD
                    && *best != by_trigger[0]
                    && s >= 2.0 * share(&by_trigger[0])
                    && self.speaks_of_trigger(i, text, &by_trigger[0])
                {
                    by_trigger.retain(|t| t != best);
                    by_trigger.insert(0, best.clone());
                } else if s >= THRESHOLD
                    && s >= 2.0 * share(&by_trigger[0])
                    && !by_trigger.contains(best)
                    && self.said_besides_triggers(text) >= SECOND_SUBJECT_CHARS
                {
                    // The examples' clear best is a second subject beside the trigger's
                    // ("病历数据放新加坡节点": the region and the rules on medical data).
                    by_trigger.push(best.clone());
                }
            }
            return Routed {
                topics: by_trigger,
                near: Vec::new(),
                tie: false,
            };
        }
        let mut out = Routed::default();
        match pick(&scored, THRESHOLD, MARGIN) {
            Some(i) => out.topics.push(self.topic_ids[i].clone()),
            // Two topics that both cover the question well and tie ("用户一半在北美一半在国内，
            // 机器该放哪边": the regions and the network): both, the better first.
            None if scored.len() >= 2 && scored[1].1 >= THRESHOLD => {
                out.topics
                    .extend(scored[..2].iter().map(|(i, _)| self.topic_ids[*i].clone()));
                out.tie = true;
            }
            // When one came close, the two or three nearest (the others within half of
            // [`NEAR`]) are offered.
            None if scored.first().is_some_and(|&(_, s)| s >= NEAR) => {
                out.near = scored
                    .iter()
                    .take_while(|(_, s)| *s >= NEAR / 2.0)
                    .take(3)
                    .map(|(i, _)| self.topic_ids[*i].clone())
                    .collect();
            }
            None => {}
        }
        out
    }

    /// The `n` topics whose examples cover most of `text` (not normalised again), with
    /// their shares, whether or not they reach the threshold: where an example for a
    /// missed question would go.
    pub fn nearest(&self, text: &str, n: usize) -> Vec<(String, f64)> {
        self.scores(text, None)
            .into_iter()
            .take(n)
            .map(|(i, s)| (self.topic_ids[i].clone(), s))
            .collect()
    }

    /// Letters, digits and Han characters of `text` outside every trigger, function
    /// characters aside: how much the question says besides its trigger words.
    fn said_besides_triggers(&self, text: &str) -> usize {
        let mut inside = vec![false; text.len()];
        for m in self.triggers.find_overlapping_iter(text) {
            inside[m.start()..m.end()]
                .iter_mut()
                .for_each(|b| *b = true);
        }
        text.char_indices()
            .filter(|&(i, c)| !inside[i] && c.is_alphanumeric() && !STOP_CHAR.contains(c))
            .count()
    }

    fn by_trigger(&self, text: &str) -> Vec<String> {
        let mut seen = vec![false; self.trigger_topic.len()];
        let mut score = vec![0usize; self.topic_ids.len()];
        for m in self.triggers.find_overlapping_iter(text) {
            let pi = m.pattern().as_usize();
            if !std::mem::replace(&mut seen[pi], true) {
                score[self.trigger_topic[pi]] += trigger_weight(&text[m.start()..m.end()]);
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

    /// `text` with every topic trigger in it blanked out (spaces of the same length).
    pub fn without_triggers(&self, text: &str) -> String {
        let mut out = text.to_string();
        for m in self.triggers.find_overlapping_iter(text) {
            out.replace_range(m.start()..m.end(), &" ".repeat(m.end() - m.start()));
        }
        out
    }

    /// Each topic's share of the question's information, best first.
    #[cfg(test)]
    fn by_example(&self, text: &str) -> Vec<(usize, f64)> {
        self.scores(text, None)
    }

    /// [`Self::by_example`] with one example left out of the index.
    fn scores(&self, text: &str, skip: Option<&Skip<'_>>) -> Vec<(usize, f64)> {
        let n = self.topic_ids.len() as f64;
        let mut grams = self.grams(text);
        grams.sort_unstable_by(|a, b| a.0.cmp(b.0).then(b.1.total_cmp(&a.1)));
        grams.dedup_by(|a, b| a.0 == b.0);
        let mut total = 0.0;
        let mut score = vec![0.0; self.topic_ids.len()];
        let mut matched = vec![0.0; self.topic_ids.len()];
        let mut topics = Vec::new();
        for (g, weight) in &grams {
            let list = self.grams.get(*g).map_or(&[][..], Vec::as_slice);
            let Some(skip) = skip else {
                // No example left out: the gram's topics and idf as built.
                let idf = weight * self.idf.get(*g).copied().unwrap_or_else(|| idf(n, 0.0));
                total += idf;
                for &(t, _) in list {
                    score[t] += idf;
                    matched[t] += weight;
                }
                continue;
            };
            topics.clear();
            for &(t, count) in list {
                let left = skip.topic == t && skip.grams.binary_search(g).is_ok();
                if count > u32::from(left) {
                    topics.push(t);
                }
            }
            let idf = weight * idf(n, topics.len() as f64);
            total += idf;
            for &t in &topics {
                score[t] += idf;
                matched[t] += weight;
            }
        }
        if total <= 0.0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f64)> = score
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i, s / total))
            .filter(|&(i, s)| s > 0.0 && matched[i] >= MIN_MATCH)
            .collect();
        scored.sort_by(|a, b| b.1.partial_cmp(&a.1).expect("finite").then(a.0.cmp(&b.0)));
        scored
    }
}

/// The inverse topic frequency of a gram that `df` of `n` topics have (smoothed).
fn idf(n: f64, df: f64) -> f64 {
    ((n + 1.0) / (df + 1.0)).ln()
}

/// How much a matched trigger says: its length, a Chinese character counting as
/// [`HAN_LETTERS`] letters, so that "数据盘" (3 characters) weighs about as much as
/// "checkpoint" (10 letters) rather than a third of it.
fn trigger_weight(t: &str) -> usize {
    t.chars()
        .map(|c| {
            if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                HAN_LETTERS
            } else {
                1
            }
        })
        .sum()
}

/// Letters of English per Chinese character, for [`trigger_weight`]: the same words in
/// the triggers of topics.toml run 3.7 letters per character on average (宕机 / downtime
/// 4, 迁移 / migration 4.5, 存储 / storage 3.5, 监控 / monitor 3.5, 检查 / check 2.5,
/// 快照 / snapshot 4, 故障 / failure 3.5, 回滚 / rollback 4).
const HAN_LETTERS: usize = 4;

/// The best topic of `scored` (best first) when its share reaches `threshold` and is
/// `margin` times the next one's.
pub fn pick(scored: &[(usize, f64)], threshold: f64, margin: f64) -> Option<usize> {
    match scored.first() {
        Some(&(i, s)) if s >= threshold && scored.get(1).is_none_or(|&(_, t)| s >= margin * t) => {
            Some(i)
        }
        _ => None,
    }
}

/// One example of `topics.toml` routed with itself left out of the index.
#[derive(Debug, Clone)]
pub struct LooCase {
    /// The example's topic id and the example.
    pub topic: String,
    pub example: String,
    /// What the router made of it (triggers and examples).
    pub routed: Routed,
    /// The topics by the examples alone, best first, with their shares.
    pub scored: Vec<(String, f64)>,
}

impl LooCase {
    /// The example reaches its own topic first.
    pub fn hit(&self) -> bool {
        self.routed.topics.first() == Some(&self.topic)
    }
}

impl Triggers {
    /// Every example of `cat` routed as a question (normalised by `normalise`) with itself
    /// left out: how well the other examples and the triggers of its topic stand for it.
    pub fn leave_one_out(&self, cat: &Catalog, normalise: &dyn Fn(&str) -> String) -> Vec<LooCase> {
        let mut out = Vec::new();
        for (ti, t) in cat.topics.iter().enumerate() {
            for ex in &t.examples {
                let lower = ex.to_lowercase();
                let skip = Skip {
                    topic: ti,
                    grams: self.distinct_grams(&lower),
                };
                let text = normalise(ex);
                let routed = self.route_skip(&text, true, Some(&skip));
                let scored = self
                    .scores(&text, Some(&skip))
                    .into_iter()
                    .map(|(i, s)| (self.topic_ids[i].clone(), s))
                    .collect();
                out.push(LooCase {
                    topic: t.id.clone(),
                    example: ex.clone(),
                    routed,
                    scored,
                });
            }
        }
        out
    }
}

/// English words too common to tell topics apart.
const STOP: &[&str] = &[
    "a", "an", "the", "is", "are", "am", "be", "do", "does", "did", "i", "we", "you", "my", "our",
    "your", "it", "its", "to", "of", "in", "on", "for", "and", "or", "if", "what", "how", "can",
    "will", "would", "should", "there", "this", "that", "with", "me", "us", "any", "at", "after",
    "right", "so", "get", "just",
];

/// Chinese words too common to tell topics apart (as bigrams), and the words of a
/// follow-up's change ("换成 FP8 呢"), which say what changes, not what about.
const STOP_ZH: &[&str] = &[
    "什么", "怎么", "你们", "我们", "是不", "不是", "会不", "不会", "能不", "不能", "一下", "可以",
    "有没", "没有", "的话", "一个", "这个", "那个", "换成", "改成", "换到", "改到",
];

/// Chinese characters too common to tell topics apart (as single characters).
const STOP_CHAR: &str = "的了吗呢吧啊是我你他们在有和就都也要会能不这那个一么什怎啥";

/// Particles: a bigram with one of them is no word.
const PARTICLES: &str = "的了吗呢吧啊么啥";

/// How much a single Chinese character counts against a bigram (a bigram says more).
const CHAR_WEIGHT: f64 = 0.5;

/// An English word as a gram: not a stop word, its stem.
fn push_word<'t>(out: &mut Vec<(&'t str, f64)>, w: &'t str) {
    if w.len() > 1 && !STOP.contains(&w) {
        out.push((stem(w), 1.0));
    }
}

/// A crude stem of a lowercase English word, so that the forms of one word meet:
/// "charges", "charged" and "charge" are `charg`, "throttling" and "throttled" `throttl`,
/// "dies" and "die" `di`, "cards" `card`. A prefix of the word.
fn stem(w: &str) -> &str {
    let n = w.len();
    let mut s = if n > 5 && w.ends_with("ing") {
        &w[..n - 3]
    } else if n > 3 && (w.ends_with("ed") || w.ends_with("es") && !w.ends_with("ees")) {
        &w[..n - 2]
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        &w[..n - 1]
    } else {
        w
    };
    if s.len() > 2 && s.ends_with('e') && !s.ends_with("ee") {
        s = &s[..s.len() - 1];
    }
    s
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
                // Two stop characters ("在吗", "要几") or a particle ("么卡", "的卡") say
                // nothing.
                let empty = g.chars().all(|c| STOP_CHAR.contains(c))
                    || g.chars().any(|c| PARTICLES.contains(c));
                if !STOP_ZH.contains(&g) && !empty {
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

    /// The topics the whole parser gives `question` (examples only where they apply).
    fn check_parsed(question: &str, expected: &str) {
        let p = advisor().parser.parse(question, 7.2);
        assert_eq!(p.topics.join(","), expected, "{question:?}");
    }

    #[test]
    fn known_misses_route_as_classes() {
        // "Unlimited" traffic capped by the port: a fee question, however it is put.
        check("宣传的流量不封顶，会不会其实卡了速度", "hidden-fees");
        check(
            "Is the bandwidth secretly capped even though traffic is unlimited?",
            "hidden-fees,network",
        );
        // Slow traffic between the cards is the interconnect, not the network.
        check("两张卡之间同步参数慢得要命是咋回事", "nvlink");
        check("why is copying tensors between the GPUs so slow?", "nvlink");
        // Making sure the machine is not shared or oversold is the delivery check.
        check("怎么确定租来的卡没有跟别人共享", "checklist");
        check(
            "How can I be sure my rented GPU is not shared with other tenants?",
            "checklist",
        );
        // A consumer card for training is the consumer-card question.
        check_parsed("公司想拿 3090 训练模型，靠谱吗", "consumer-vs-datacenter");
        check_parsed(
            "Are gaming GPUs any good for training?",
            "consumer-vs-datacenter",
        );
        // What a failure does to the data is the migration answer.
        check("If the server crashes, is my data gone?", "migration");
        check("机器挂掉的话里面的文件会不会丢", "migration");
    }

    #[test]
    fn below_the_threshold_the_nearest_topics_are_named() {
        let a = advisor();
        let t = Triggers::new(&a.catalog);
        // Renting for a few days to try is a billing question (its example).
        let r = t.route(
            &a.parser
                .lexicon()
                .normalise("能不能先试用几天再决定付不付钱"),
            true,
        );
        assert_eq!(r.topics, ["billing"], "{r:?}");
        let q = "先试用两天，满意了再付钱可以吗";
        let r = t.route(&a.parser.lexicon().normalise(q), true);
        assert!(r.topics.is_empty(), "{q:?} {r:?}");
        assert!((2..=3).contains(&r.near.len()), "{q:?} {r:?}");
        assert!(r.near.iter().any(|n| n == "billing"), "{q:?} {r:?}");
        // Nothing near: no topic is offered.
        let r = t.route(&a.parser.lexicon().normalise("明天公司团建去哪"), true);
        assert_eq!(r, Routed::default());
    }

    #[test]
    fn a_chinese_trigger_weighs_like_the_english_word() {
        // Checkpoints on a disk: the disk is the question, not the recovery.
        check(
            "每小时存一次 checkpoint，数据盘会不会不够",
            "storage,migration",
        );
        check("checkpoint 太多了，磁盘空间够不够用", "storage,migration");
        check("断点续训用的 checkpoint 怎么恢复", "migration");
    }

    #[test]
    fn a_workload_is_not_taken_by_the_examples() {
        // A feasibility question stays one; the pitfall without a workload is routed.
        check_parsed("4090 能训练 70B 吗", "");
        check_parsed("Can a 4090 fine-tune a 13B model?", "");
        check_parsed("T4 租三个月多少", "");
        check_parsed("4090 适合拿来训练吗", "consumer-vs-datacenter");
    }

    #[test]
    fn leave_one_out_reaches_the_topic() {
        let cases = loo();
        let hits = cases.iter().filter(|c| c.hit()).count();
        let share = hits as f64 / cases.len() as f64;
        let misses: Vec<String> = cases
            .iter()
            .filter(|c| !c.hit())
            .map(|c| format!("{} {:?} -> {:?}", c.topic, c.example, c.routed))
            .collect();
        // BENCHMARKS.md: 280/376 (0.74) when the threshold was set; an example that
        // routes elsewhere once left out lowers it (`gpu-advisor check` shows the count).
        assert!(
            share >= 0.70,
            "leave-one-out {hits}/{}:\n{}",
            cases.len(),
            misses.join("\n")
        );
    }

    #[test]
    fn off_topic_questions_are_not_routed_by_examples() {
        let a = advisor();
        let t = Triggers::new(&a.catalog);
        for q in off_topic() {
            let p = a.parser.parse(&q, 7.2);
            if !examples_apply(&p) {
                continue;
            }
            let text = a.parser.lexicon().normalise(&q);
            let got = pick(&t.by_example(&text), THRESHOLD, MARGIN);
            assert!(got.is_none(), "{q:?} -> {}", t.topic_ids[got.unwrap_or(0)]);
        }
    }

    #[test]
    fn grams_are_bigrams_and_words() {
        let grams: Vec<&str> = grams_of("显存 cards 够").into_iter().map(|g| g.0).collect();
        assert_eq!(grams, vec!["显", "存", "显存", "card", "够"]);
    }

    #[test]
    fn forms_of_a_word_share_a_stem() {
        for (a, b) in [
            ("charges", "charge"),
            ("charged", "charging"),
            ("throttled", "throttling"),
            ("dies", "die"),
            ("refunds", "refund"),
            ("billed", "billing"),
            ("fees", "fee"),
            ("prices", "price"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("card"), stem("car"));
    }

    /// Every example routed with itself left out of the index.
    fn loo() -> Vec<LooCase> {
        let a = advisor();
        let t = Triggers::new(&a.catalog);
        let lex = a.parser.lexicon();
        t.leave_one_out(&a.catalog, &|q| lex.normalise(q))
    }

    /// The questions (last turns) of the project's corpora that want an answer other than
    /// a knowledge topic (a recommendation, a verdict, a comparison, a budget, a price, the
    /// help or the not-understood reply).
    fn off_topic() -> Vec<String> {
        const CORPORA: &[&str] = &[
            include_str!("../../../tests/corpus/extra.jsonl"),
            include_str!("../../../tests/corpus/models.jsonl"),
            include_str!("../../../tests/corpus/models-2.jsonl"),
            include_str!("../../../tests/corpus/outsider-a.jsonl"),
            include_str!("../../../tests/corpus/outsider-b.jsonl"),
            include_str!("../../../tests/corpus/probe.jsonl"),
        ];
        let answer = [
            "recommend",
            "feasibility",
            "compare",
            "budget",
            "price",
            "unknown",
            "help",
        ];
        let mut out = Vec::new();
        for line in CORPORA.iter().flat_map(|c| c.lines()) {
            if line.trim().is_empty() {
                continue;
            }
            let case: serde_json::Value = serde_json::from_str(line).expect("json");
            let turns = case["turns"].as_array().expect("turns");
            let intents: Vec<&str> = match &case["expect"]["intent"] {
                serde_json::Value::String(s) => vec![s.as_str()],
                serde_json::Value::Array(a) => a.iter().filter_map(|v| v.as_str()).collect(),
                _ => Vec::new(),
            };
            // The last turn is the one the expectation is about (a follow-up such as
            // "batch 改成 8" must not become a knowledge question either).
            if !intents.is_empty() && intents.iter().all(|i| answer.contains(i)) {
                let last = turns.last().and_then(|t| t.as_str()).expect("turn");
                out.push(last.to_string());
            }
        }
        out
    }

    /// The threshold and margin against the examples left out and the off-topic questions
    /// (`cargo test calibrate -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn calibrate() {
        let a = advisor();
        let t = Triggers::new(&a.catalog);
        let lex = a.parser.lexicon();
        let cases = loo();
        // Only the questions the examples may route at all (no workload stated).
        let off_q: Vec<String> = off_topic()
            .into_iter()
            .filter(|q| examples_apply(&a.parser.parse(q, 7.2)))
            .collect();
        let off: Vec<Vec<(usize, f64)>> = off_q
            .iter()
            .map(|q| t.by_example(&lex.normalise(q)))
            .collect();
        println!(
            "whole route: {}/{}",
            cases.iter().filter(|c| c.hit()).count(),
            cases.len()
        );
        let ids: Vec<&str> = a.catalog.topics.iter().map(|t| t.id.as_str()).collect();
        println!(
            "{} examples, {} off-topic questions",
            cases.len(),
            off.len()
        );
        for margin in [1.0, 1.05, 1.1] {
            for th in (16..=30).map(|x| x as f64 / 100.0) {
                let hits = cases
                    .iter()
                    .filter(|c| {
                        let sc: Vec<(usize, f64)> = c
                            .scored
                            .iter()
                            .map(|(id, s)| (ids.iter().position(|i| i == id).unwrap(), *s))
                            .collect();
                        pick(&sc, th, margin).is_some_and(|i| ids[i] == c.topic)
                    })
                    .count();
                let wrong = off
                    .iter()
                    .filter(|sc| pick(sc, th, margin).is_some())
                    .count();
                println!("margin {margin:.2} threshold {th:.2}: examples {hits}/{} off-topic routed {wrong}", cases.len());
            }
        }
        for c in cases.iter().filter(|c| !c.hit()) {
            println!(
                "miss {} {:?} -> {:?} {:?}",
                c.topic,
                c.example,
                c.routed,
                &c.scored[..c.scored.len().min(3)]
            );
        }
        for (q, sc) in off_q.iter().zip(&off) {
            if let Some(&(i, s)) = sc.first() {
                if s >= 0.1 {
                    println!("off {q:?} -> {} {s:.2}", ids[i]);
                }
            }
        }
    }
}
