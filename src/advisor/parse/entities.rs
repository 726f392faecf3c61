//! Card names in a question: card aliases from `gpus.toml`, with a count next to them
//! (`两张 A100`, `8xH100`: cards, DOMAIN.md §6, never machines), unless declined ("不要
//! H100"). Compiled once from the catalog; reading a question allocates only the copy
//! whose card names are blanked out. Model names are `models.rs`'.

use super::slots::{negated, negated_since};
use crate::advisor::catalog::{normalize_alias, Catalog, Unit};
use crate::advisor::lexicon::Names;
use crate::advisor::lexicon::{Lexicon, Scan, Slot};
use crate::advisor::workload::Asked;
use regex::Regex;
/// Tables built once from the catalog and intents/, read per question: FxHash (`Names`).
type HashMap<K, V> = std::collections::HashMap<K, V, Names>;

/// The catalog's card and model names, compiled.
pub struct Entities {
    gpu_re: Regex,
    gpu_by_alias: HashMap<String, String>,
    /// Cards in one machine of each card rented by the whole machine (`offers.toml`:
    /// `unit = "machine"`, `cards_per_unit`): "两台 H100" is two such machines.
    machine_cards: HashMap<String, u32>,
    /// "machines", "nodes", "整机" right after a card name: the count before it counts
    /// machines ("two H100 machines").
    machine_after: Regex,
    /// Cards sold in several memory sizes ("a100-40g", "a100-80g"): each card's family
    /// (the id before its size) and size in GB.
    variants: Vec<(String, u32, String)>,
    /// A memory size written alone ("80GB", "40g").
    memory_re: Regex,
    size_before_re: Regex,
    /// The consumer cards (`consumer` in gpus.toml): "no consumer cards" declines them.
    consumer: Vec<String>,
    /// The Hopper cards (`arch = "Hopper"` in gpus.toml): "no H-series", "不要 H 卡".
    hopper: Vec<String>,
}

/// What the cards of a question say besides `Asked`'s fields.
#[derive(Debug, Default, Clone, Copy)]
pub struct CardFacts {
    /// A count was written next to a card name ("2 张 A100 80G").
    pub count_at_card: bool,
    /// A card was named and declined ("不要 H100").
    pub declined: bool,
}

impl Entities {
    pub fn new(cat: &Catalog) -> Entities {
        let mut gpu_by_alias = HashMap::default();
        let mut alts: Vec<String> = Vec::new();
        for g in &cat.gpus {
            for a in g.aliases.iter().chain(std::iter::once(&g.id)) {
                let a = a.to_lowercase();
                gpu_by_alias.insert(normalize_alias(&a), g.id.clone());
                alts.push(a);
            }
        }
        alts.sort_by_key(|a| std::cmp::Reverse(a.chars().count()));
        alts.dedup();
        let pattern = alts
            .iter()
            .map(|a| {
                a.split([' ', '-', '_'])
                    .filter(|s| !s.is_empty())
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(r"[\s\-_]*")
            })
            .collect::<Vec<_>>()
            .join("|");
        let gpu_re = Regex::new(&format!("(?:{pattern})")).expect("escaped aliases compile");

        let consumer = cat
            .gpus
            .iter()
            .filter(|g| g.consumer)
            .map(|g| g.id.clone())
            .collect();
        let machine_cards = cat
            .offers
            .iter()
            .filter(|o| o.unit == Unit::Machine)
            .map(|o| (o.gpu.clone(), o.cards_per_unit))
            .collect();
        let machine_after = Regex::new(
            r"^\s*(?:80g|80gb|sxm)?\s*(?:machines?|nodes?|servers?|boxes|整机|服务器|机器)",
        )
        .expect("a fixed pattern");
        // "a100-40g": family "a100", 40 GB, when another card shares the family.
        let sized: Vec<(String, u32, String)> = cat
            .gpus
            .iter()
            .filter_map(|g| {
                let (family, size) = g.id.rsplit_once('-')?;
                let gb: u32 = size.strip_suffix('g')?.parse().ok()?;
                (f64::from(gb) == g.memory_gb).then(|| (family.to_string(), gb, g.id.clone()))
            })
            .collect();
        let variants = sized
            .iter()
            .filter(|(f, _, id)| sized.iter().any(|(f2, _, id2)| f2 == f && id2 != id))
            .cloned()
            .collect();
        Entities {
            gpu_re,
            gpu_by_alias,
            machine_cards,
            machine_after,
            variants,
            memory_re: Regex::new(r"(?:^|[^0-9a-z.])([0-9]{2,3})\s*gb?(?-u:\b)")
                .expect("a fixed pattern"),
            size_before_re: Regex::new(
                r"(?:^|[^0-9a-z.])([0-9]{2,3})\s*gb?\s*(?:的|版|版本的|显存的)?\s*$",
            )
            .expect("a fixed pattern"),
            consumer,
            hopper: cat
                .gpus
                .iter()
                .filter(|g| g.arch == "Hopper")
                .map(|g| g.id.clone())
                .collect(),
        }
    }

    /// A class of cards declined, or the other class asked for: "no consumer cards",
    /// "只要数据中心卡" decline every consumer card; "别推荐切片", "我要独占整卡" decline
    /// slices of a card.
    fn classes(&self, lex: &Lexicon, scan: &Scan, text: &str, a: &mut Asked) {
        let declined = |class: Slot| {
            lex.has_in(scan, class)
                && lex
                    .all_in(scan, class, text, false)
                    .iter()
                    .any(|f| negated(lex, text, f.start))
        };
        let mut decline = |ids: &[String]| {
            for id in ids {
                if !a.declined.contains(id) && !a.gpus.contains(id) {
                    a.declined.push(id.clone());
                }
            }
        };
        if declined(Slot::ClassConsumer) || lex.has_in(scan, Slot::ClassDatacenterOnly) {
            decline(&self.consumer);
        }
        if declined(Slot::ClassHopper) {
            decline(&self.hopper);
        }
        a.whole_cards = declined(Slot::ClassSlice) || lex.has_in(scan, Slot::ClassWholeCard);
    }

    /// "A100 40GB vs 80GB", "is the 80GB A100 worth it over the 40GB one?": one card
    /// named with two of its memory sizes is both of those cards, in the order written.
    fn sizes_of_one_card(&self, text: &str, a: &mut Asked) {
        let [one] = a.gpus.as_slice() else {
            return;
        };
        let Some((family, _, _)) = self.variants.iter().find(|(_, _, id)| id == one) else {
            return;
        };
        let mut said: Vec<String> = Vec::new();
        for c in self.memory_re.captures_iter(text) {
            // "需要 80G 显存，A100 40G 够吗": an amount of memory needed, not a card.
            let rest = text[c.get(0).map_or(0, |m| m.end())..].trim_start();
            if ["显存", "内存", "vram", "memory", "of memory", "ram"]
                .iter()
                .any(|w| rest.starts_with(w))
            {
                continue;
            }
            let gb: u32 = c[1].parse().unwrap_or(0);
            if let Some((_, _, id)) = self
                .variants
                .iter()
                .find(|(f, g, _)| f == family && *g == gb)
            {
                if !said.contains(id) && !a.declined.contains(id) {
                    said.push(id.clone());
                }
            }
        }
        if said.len() >= 2 {
            a.gpus = said;
        }
    }

    /// How many of card `id` the text says, right before its mention (`prefix` is the
    /// text up to it) or right after it (`end`): cards, whole machines, "单卡".
    fn count_of(
        &self,
        lex: &Lexicon,
        text: &str,
        prefix: &str,
        end: usize,
        id: &str,
    ) -> Option<f64> {
        let start = prefix.len().saturating_sub(24);
        let start = (start..=prefix.len())
            .find(|i| prefix.is_char_boundary(*i))
            .unwrap_or(0);
        let window = &prefix[start..];
        let machines = |said: &str| lex.find(Slot::CardCountInMachines, said).is_some();
        let in_cards = |said: &str| lex.find(Slot::CardCountInCards, said).is_some();
        match lex.find(Slot::CardCountBefore, window) {
            // "两台 8 卡 H100", "2 machines of 8x A100": machines of that many
            // cards each.
            Some(f) => Some(
                f.value
                    * lex
                        .find(Slot::CardCountBefore, &window[..f.start])
                        .filter(|m| machines(&window[m.start..m.end]))
                        .map_or(1.0, |m| m.value)
                    // "两台 H100", "two H100 machines": whole machines of a card
                    // rented by the machine (DOMAIN.md §6); "an 8x H100 node" is
                    // one node of eight cards.
                    * match self.machine_cards.get(id) {
                        Some(&n)
                            if machines(&window[f.start..f.end])
                                || (!in_cards(&window[f.start..f.end])
                                    && self.machine_after.is_match(&text[end..])) =>
                        {
                            f64::from(n)
                        }
                        _ => 1.0,
                    },
            ),
            None => lex
                .find(Slot::CardCountAfter, &text[end..])
                .map(|f| f.value)
                // "换成 H100 整机呢", "an H100 node": one whole machine.
                .or_else(|| {
                    self.machine_cards
                        .get(id)
                        .filter(|_| self.machine_after.is_match(&text[end..]))
                        .map(|&n| f64::from(n))
                })
                // "单卡 3090", "A100 40G 单卡": one card.
                .or_else(|| {
                    lex.find(Slot::CardCountSingleBefore, window)
                        .or_else(|| lex.find(Slot::CardCountSingleAfter, &text[end..]))
                        .map(|f| f.value)
                }),
        }
    }

    /// The card of `id`'s family whose memory is said right before its name ("80G 的
    /// A100", "80gb a100"), and where in `prefix` the size starts.
    fn size_before<'s>(&'s self, prefix: &str, id: &'s String) -> Option<(&'s String, usize)> {
        let (family, _, _) = self.variants.iter().find(|(_, _, v)| v == id)?;
        let c = self.size_before_re.captures(prefix)?;
        let size = c.get(1)?;
        let gb: u32 = size.as_str().parse().ok()?;
        self.variants
            .iter()
            .find(|(f, g, _)| f == family && *g == gb)
            .map(|(_, _, v)| (v, size.start()))
    }

    /// Reads the cards named in `text` (and a count next to the first) into `a`; returns
    /// `text` with the card names blanked out, so "910B" is not read as a model size.
    pub fn cards(
        &self,
        lex: &Lexicon,
        scan: &Scan,
        text: &str,
        a: &mut Asked,
        facts: &mut CardFacts,
    ) -> String {
        let mut blanked = text.to_string();
        let mut subject: Option<usize> = None;
        // The end of the card named before: a negation before that one is not this one's
        // ("不要 H100 用 A100").
        let mut floor = 0;
        // Whether the card named before was declined: "不考虑 H20 和 H100" declines both.
        let mut last_declined = false;
        for m in self.gpu_re.find_iter(text) {
            let since = std::mem::replace(&mut floor, m.end());
            let gap = text[since..m.start()]
                .trim()
                .trim_matches(|c: char| matches!(c, ',' | '，' | '、' | '/'))
                .trim();
            let listed = last_declined
                && matches!(
                    gap,
                    "" | "和"
                        | "与"
                        | "跟"
                        | "及"
                        | "以及"
                        | "或"
                        | "或者"
                        | "还有"
                        | "and"
                        | "or"
                        | "nor"
                );
            last_declined = false;
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let prefix = &text[..m.start()];
            let times = prefix.trim_end().ends_with(['x', '*'])
                && prefix
                    .trim_end()
                    .trim_end_matches(['x', '*'])
                    .trim_end()
                    .ends_with(|c: char| c.is_ascii_digit());
            let glued_before = before.is_some_and(|c| c.is_ascii_alphanumeric()) && !times;
            // A plural ("two 3090s", "A100s") is still the card.
            let plural = after == Some('s')
                && text[m.end() + 1..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric());
            // A count glued after it ("3090x2", "a100*4") is still the card.
            let times_after = {
                let rest = &text[m.end()..];
                let digits = rest
                    .strip_prefix(['x', '*'])
                    .map(|r| r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len());
                digits.is_some_and(|d| {
                    d > 0
                        && rest[1 + d..]
                            .chars()
                            .next()
                            .is_none_or(|c| !c.is_ascii_alphanumeric())
                })
            };
            let glued_after =
                after.is_some_and(|c| c.is_ascii_alphanumeric()) && !plural && !times_after;
            if glued_before || glued_after {
                continue;
            }
            let Some(id) = self.gpu_by_alias.get(&normalize_alias(m.as_str())) else {
                continue;
            };
            // "80G 的 A100", "80GB A100": the size said just before the name picks the
            // family's card of that size.
            let sized = self.size_before(prefix, id);
            let id = sized.map_or(id, |(v, _)| v);
            // The count is read before the size ("两张 80G 的 A100").
            let prefix = sized.map_or(prefix, |(_, at)| &prefix[..at]);
            blanked.replace_range(m.range(), &" ".repeat(m.len()));
            // A card declined once stays declined ("别给我推 4090，我们之前用 4090 踩过坑").
            if a.declined.contains(id) {
                continue;
            }
            // A card named again with the count it lacked ("the RTX 4090 can't do FP8 …
            // would it fit on 4x 4090?"): that count is the card's.
            if a.gpus.contains(id) {
                let count = self
                    .count_of(lex, text, prefix, m.end(), id)
                    .filter(|c| *c >= 1.0 && *c <= 64.0)
                    .map(|c| c as u32);
                match (a.counted.iter().position(|(g, _)| g == id), count) {
                    (None, Some(c)) => {
                        if a.gpus.first() == Some(id) {
                            a.gpu_count = Some(c);
                            facts.count_at_card = true;
                        }
                        a.counted.push((id.clone(), c));
                    }
                    // "目前租了 2 张 A100 40G … 4 张 A100 40G 到底够不够？": the count the
                    // question asks about.
                    (Some(i), Some(c)) if a.counted[i].1 != c && asked_at(text, m.start()) => {
                        a.counted[i].1 = c;
                        if a.gpus.first() == Some(id) {
                            a.gpu_count = Some(c);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            // "别给我推 4090 以外的卡", "nothing other than a 4090": the card is the one
            // not declined.
            let after = text[m.end()..].trim_start();
            let except = lex.find(Slot::CardExceptAfter, after).is_some()
                || lex.find(Slot::CardExceptBefore, prefix).is_some();
            let excepted = except
                && lex
                    .find(Slot::CardExceptRefusal, sentence(text, m.range()))
                    .is_some();
            if except && !excepted {
                // "除了 H20 还有啥卡能跑": the card set aside.
                facts.declined = true;
                if !a.declined.contains(id) {
                    a.declined.push(id.clone());
                }
                continue;
            }
            // To the end of the sentence: the words after the card may give a reason first
            // ("T4 太慢，不考虑", "the 4090 is too small, skip it").
            let after_clause = after
                .split(['。', ';', '；', '!', '！', '?', '？'])
                .next()
                .unwrap_or("");
            let declined_after = lex.find(Slot::NegationAfter, after_clause).is_some();
            if !excepted
                && (declined_after
                    || listed
                    || lex.has_in(scan, Slot::NegationWord)
                        && negated_since(lex, text, since, m.start()))
            {
                facts.declined = true;
                last_declined = true;
                if !a.declined.contains(id) {
                    a.declined.push(id.clone());
                }
                continue;
            }
            let count = self.count_of(lex, text, prefix, m.end(), id);
            if let Some(c) = count.filter(|c| *c >= 1.0 && *c <= 64.0) {
                // The count of the first card is the customer's; every count is kept
                // with its card for a comparison.
                if a.gpus.is_empty() {
                    a.gpu_count = Some(c as u32);
                    facts.count_at_card = true;
                }
                a.counted.push((id.clone(), c as u32));
            }
            // "on H100s", "多张 4090": the card in the plural.
            if lex.find(Slot::CardPluralAfter, &text[m.end()..]).is_some()
                || lex.find(Slot::CardPluralBefore, prefix).is_some()
            {
                a.cards_plural = true;
            }
            // "你说 3090 跑 13B 不行，那 4090 呢": the card turned to is the one asked about.
            if subject.is_none()
                && !a.gpus.is_empty()
                && lex.find(Slot::CardTurnedTo, prefix).is_some()
            {
                subject = Some(a.gpus.len());
            }
            a.gpus.push(id.clone());
        }
        if let Some(i) = subject.filter(|_| !facts.count_at_card) {
            let id = a.gpus.remove(i);
            a.gpus.insert(0, id);
        }
        self.sizes_of_one_card(text, a);
        self.classes(lex, scan, text, a);
        a.gpu = a.gpus.first().cloned();
        // "单卡能搞定吗？不行就推荐一下": a count asked with a fallback is not a constraint.
        if a.gpu_count.is_none() && !lex.has_in(scan, Slot::CardCountFallback) {
            a.gpu_count = [Slot::CardCount, Slot::CardCountPair, Slot::CardCountSingle]
                .iter()
                .find_map(|&s| {
                    // "we don't want to pay for 8 cards" counts none.
                    lex.all_in(scan, s, text, false)
                        .into_iter()
                        .find(|f| !negated(lex, text, f.start))
                })
                .map(|f| f.value)
                .filter(|c| *c >= 1.0 && *c <= 64.0)
                .map(|c| c as u32);
        }
        blanked
    }
}

/// Whether the clause of `text` at byte `at` asks (`topics::clause_asks`).
fn asked_at(text: &str, at: usize) -> bool {
    super::topics::clauses(text)
        .into_iter()
        .find(|&(from, to)| from <= at && at < to)
        .is_some_and(|(from, to)| super::topics::clause_asks(&text[from..to]))
}

/// The sentence around `range` of `text`: from the end of the sentence before to the end
/// of this one.
fn sentence(text: &str, range: std::ops::Range<usize>) -> &str {
    const ENDS: [char; 6] = ['。', '!', '！', '?', '？', '\n'];
    let start = text[..range.start].rfind(ENDS).map_or(0, |i| {
        i + text[i..].chars().next().map_or(0, char::len_utf8)
    });
    let end = text[range.end..]
        .find(ENDS)
        .map_or(text.len(), |i| range.end + i);
    &text[start..end]
}
