//! Topics in brief: a topic's title and first sentences, for a reply that is mostly
//! about something else, made once per topic and language when the advisor is built.
//! Wording only: which topics a reply quotes is decided in `topics`.

use crate::advisor::catalog::{Catalog, Topic};
use crate::advisor::parse::Lang;
use crate::advisor::reply::t;

/// Every topic's [`topic_snippet`] in both languages, made once when the advisor is built:
/// they depend on the catalog alone, and a reply quotes up to two of them.
#[derive(Debug, Clone, Default)]
pub struct Snippets(Vec<[String; 2]>);

impl Snippets {
    pub fn new(cat: &Catalog) -> Snippets {
        Snippets(
            cat.topics
                .iter()
                .map(|t| [topic_snippet(t, Lang::Zh), topic_snippet(t, Lang::En)])
                .collect(),
        )
    }

    /// The snippet of `topic`, one of `cat`'s topics.
    pub fn get(&self, cat: &Catalog, topic: &Topic, lang: Lang) -> String {
        let made = cat
            .topics
            .iter()
            .position(|t| std::ptr::eq(t, topic))
            .and_then(|i| self.0.get(i));
        match made {
            Some([zh, en]) => t(lang, zh, en).to_string(),
            None => topic_snippet(topic, lang),
        }
    }
}

/// A topic in brief, for a reply that is mostly about something else: its title and
/// its first sentences, up to about 200 characters.
pub fn topic_snippet(topic: &Topic, lang: Lang) -> String {
    let text = t(lang, &topic.text_zh, &topic.text_en).trim();
    let mut out = String::new();
    for sentence in text
        .split_inclusive(['。', '！', '？', '\n'])
        .flat_map(|s| s.split_inclusive(". "))
    {
        let s = sentence.trim();
        if s.is_empty() || s.starts_with("- ") || s.starts_with("**") && s.ends_with("**") {
            continue;
        }
        if !out.is_empty() && out.chars().count() + s.chars().count() > 200 {
            break;
        }
        if !out.is_empty() && lang == Lang::En {
            out.push(' ');
        }
        out.push_str(s);
        if out.chars().count() >= 60 {
            break;
        }
    }
    let out: String = out.chars().take(240).collect();
    format!(
        "**{}**{}{}",
        t(lang, &topic.title_zh, &topic.title_en),
        t(lang, "：", ": "),
        out
    )
}
