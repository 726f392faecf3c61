//! A card asked for by its memory size alone ("16G 显卡能跑吗", "单张 80G", "a 16GB GPU"):
//! read as the rentable card of that much memory, so the question gets the verdict for
//! such a card instead of a recommendation that ignores the wish.

use regex::Regex;

use super::super::catalog::{Catalog, Unit};
use super::super::workload::Asked;

/// Card sizes a memory wish may name (GB): below 8 it is no card on offer, above 192 no
/// single card (the largest in the catalog is the 141 GB H200).
const WISH_GB: std::ops::RangeInclusive<f64> = 8.0..=192.0;

pub struct MemoryWish {
    re: Vec<Regex>,
    /// (memory GB, price per card and month, GPU id) of every card rented by the card
    /// or by the machine (not the slices, not the domestic-only cards), smallest first,
    /// then cheapest.
    cards: Vec<(f64, f64, String)>,
}

impl MemoryWish {
    pub fn new(cat: &Catalog) -> MemoryWish {
        let gb = r"(?P<n>[0-9]{1,3})\s*(?:g|gb)";
        let re = [
            format!(r"(?:^|[^0-9a-z.]){gb}\s*(?:的)?\s*(?:显存|vram|memory)?\s*(?:的)?\s*(?:显卡|卡|gpu|card|graphics card)"),
            format!(r"(?:单张|一张|单卡|单块|一块|one|a single)\s*{gb}(?:[^a-z0-9]|$)"),
            format!(r"(?:显存|vram)\s*(?:只有|是|为|有)?\s*{gb}(?:[^a-z0-9]|$)"),
            format!(r"(?:^|[^0-9a-z.]){gb}\s*(?:的)?\s*(?:显存|vram)"),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("memory wish pattern compiles"))
        .collect();
        let mut cards: Vec<(f64, f64, String)> = cat
            .gpus
            .iter()
            .filter_map(|g| {
                let per_card = cat
                    .offers
                    .iter()
                    .filter(|o| o.gpu == g.id && !o.domestic && o.unit != Unit::Slice)
                    .map(|o| o.price.mid() / f64::from(o.cards_per_unit.max(1)))
                    .min_by(f64::total_cmp)?;
                Some((g.memory_gb, per_card, g.id.clone()))
            })
            .collect();
        cards.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        MemoryWish { re, cards }
    }

    /// Sets `a.gpu` to the cheapest card of the smallest memory ≥ the size asked, when the
    /// question names a memory size as its card and no card by name.
    pub fn read(&self, text: &str, a: &mut Asked) {
        if !a.gpus.is_empty() {
            return;
        }
        let Some(gb) = self
            .re
            .iter()
            .flat_map(|re| re.captures_iter(text))
            .filter_map(|c| c.name("n")?.as_str().parse::<f64>().ok())
            .find(|gb| WISH_GB.contains(gb))
        else {
            return;
        };
        if let Some((_, _, id)) = self.cards.iter().find(|(m, _, _)| *m >= gb) {
            a.gpus.push(id.clone());
            a.gpu = Some(id.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(q: &str) -> Option<String> {
        let mut a = Asked::default();
        MemoryWish::new(&crate::advisor::fixtures::advisor().catalog).read(q, &mut a);
        a.gpu
    }

    #[test]
    fn a_memory_size_names_the_card_of_that_size() {
        assert_eq!(read("gpt-oss-20b 16g 显卡能跑吗").as_deref(), Some("t4"));
        assert_eq!(read("gpt-oss-20b 16g 显存的卡够吗").as_deref(), Some("t4"));
        assert_eq!(
            read("will gpt-oss-20b fit on a 16gb gpu?").as_deref(),
            Some("t4")
        );
        assert!(read("gpt-oss-120b 单张 80g 能跑吗")
            .is_some_and(|g| g.contains("80") || g.contains("h100")));
        assert_eq!(
            read("24g 显存能跑 qwen3-14b 吗").as_deref(),
            Some("rtx3090")
        );
        assert_eq!(read("qwen3-14b 推理要多少显存"), None);
        assert_eq!(read("qwen3-32b 16k 上下文"), None);
    }
}
