//! The question parser: free text → what it states (`Asked`), which cues it carries and
//! which knowledge topics it touches. Pure: the lexicon and catalog are compiled once by
//! `Parser::new`; parsing allocates only the normalised copy of the question. It reads;
//! it does not decide the intent or fill defaults (`intent` and `workload` do).
//!
//! The steps, in order: `normalise` (one folded copy of the question), `entities` (card
//! names with their counts, declined cards), `models` (model names with their qualifiers),
//! `slots` (task, precision and every number, each number in one slot), `topics` (the
//! knowledge topics, scored against their example questions). The intent is decided
//! from the cues and these by `intent`.

mod aside;
mod change;
mod entities;
mod memory_wish;
mod models;
pub(crate) mod normalise;
mod quantities;
mod recipe;
mod serving;
mod slots;
mod topics;
mod unknown;

use super::catalog::{Catalog, TopicAbout, ANNUAL_MONTHS};
use super::lexicon::{Cue, Lexicon, Scan, Slot};
use super::workload::{Asked, Task};
use entities::{CardFacts, Entities};
use memory_wish::MemoryWish;
use models::Models;
use quantities::Quantities;
use std::borrow::Cow;
pub use topics::LooCase;
use topics::Triggers;

/// Questions longer than this many bytes are cut (at a char boundary) before parsing:
/// chat questions are short, and the cap bounds the work per message.
pub const MAX_QUESTION_BYTES: usize = 2000;
/// Sizes beyond this are absurd for a rental question (the largest public models are
/// ~2T parameters).
pub const MAX_PARAMS_B: f64 = 10_000.0;
/// "训练/train" on this many tokens or more is pretraining (DOMAIN.md §6).
pub const PRETRAIN_TOKENS: f64 = 100e9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Zh,
    En,
}

impl Lang {
    pub fn id(self) -> &'static str {
        match self {
            Lang::Zh => "zh",
            Lang::En => "en",
        }
    }
}

/// Something the question states that cannot be right.
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    NegativeSize(f64),
    HugeSize(f64),
    HugeNumber(&'static str, f64),
}

/// What one question says, before any conversation context.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub lang: Option<Lang>,
    /// Whether the text shows its language (ideographs, or two English words); a turn of
    /// names and numbers only ("INT8", "H100?") keeps the conversation's.
    pub lang_sure: bool,
    /// Add-ons asked for with a price ("加到 128G 内存"): their kinds (catalog/offers.toml).
    pub addons: Vec<&'static str>,
    pub empty: bool,
    pub asked: Asked,
    pub cues: Vec<Cue>,
    /// Topic ids by descending score.
    pub topics: Vec<String>,
    /// The nearest topic ids when no topic was sure (the help reply offers them).
    pub near_topics: Vec<String>,
    pub invalid: Option<Invalid>,
    /// Slots that modify a workload were stated (for follow-ups).
    pub modifiers: bool,
    /// Written as a question (ends with ? / 吗 / 呢).
    pub question: bool,
    /// A count was written next to a card ("2 张 A100 80G"): the customer's cards.
    pub count_at_card: bool,
    /// A model name the catalog does not know, as written.
    pub unknown_model: Option<String>,
    /// That name is a family of the catalog's models, without its size ("Qwen3").
    pub family_named: bool,
    /// A card's memory size said without the card ("and the 80G version?"): the last
    /// turn's card in that size (answer.rs).
    pub card_variant_gb: Option<f64>,
    /// The language the customer asks the replies in ("换成英文回答", "answer in English").
    pub reply_lang: Option<Lang>,
    /// The workload is the background of another question (a diagnosis, the disk): an
    /// FAQ the examples reach answers it (`topics::workload_is_background`).
    pub background: bool,
    /// An amount is asked for ("多少", "how much", "what do you charge").
    pub amount_asked: bool,
    /// How long a job runs is asked ("要跑多久", "how long will it take").
    pub duration_asked: bool,
    /// The lower end of a budget stated as a range ("五六千", "3-5k 一个月"), CNY a
    /// month; the budget is the upper end, and the reply says so.
    pub budget_low: Option<f64>,
    /// A marker of an aside was found (someone else's claim, an earlier attempt…): the
    /// question may be only part of the text ([`aside`]).
    pub aside_marked: bool,
    /// The message asks whether a claim holds ("True?", "真的吗", "靠谱吗").
    pub claim_checked: bool,
    /// A training or serving recipe was stated (attention, checkpointing, a quantisation
    /// library, LoRA targets or rank, a framework, a ZeRO stage).
    pub recipe_stated: bool,
}

impl Parsed {
    pub fn cue(&self, cue: Cue) -> bool {
        self.cues.contains(&cue)
    }
    pub fn lang(&self) -> Lang {
        self.lang.unwrap_or(Lang::Zh)
    }
}

/// What a question the advisor could not answer lacked, for `gpu-advisor report`: what
/// the sales team would add to the catalog or to `intents/`.
#[derive(Debug, Clone, PartialEq)]
pub enum Missing {
    /// A model name (as written, when the catalog does not know it; empty when a workload
    /// was described without any model or size).
    Model(String),
    /// A number no slot read (a new way to write a budget, context, count…).
    Number,
    /// A knowledge topic: the topics whose examples come nearest, with the share of the
    /// question they cover (where an example would go).
    Topic(Vec<(String, f64)>),
}

/// A number in a question: a digit, or a Chinese numeral that is not part of a word
/// ("一下", "一起", "统一"): "一" counts only before another numeral or a unit.
fn has_number(text: &str) -> bool {
    const NUMERALS: &str = "一二两三四五六七八九十百千万亿";
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().any(|(i, &c)| {
        c.is_ascii_digit()
            || (c != '一' && NUMERALS.contains(c))
            || (c == '一'
                && chars
                    .get(i + 1)
                    .is_some_and(|&n| NUMERALS.contains(n) || "张块台年月天周".contains(n)))
    })
}

/// The compiled parser.
pub struct Parser {
    lex: Lexicon,
    entities: Entities,
    memory_wish: MemoryWish,
    models: Models,
    quantities: Quantities,
    triggers: Triggers,
    /// Billing hours in a month (`catalog/billing.toml`): an amount per hour or per day
    /// is a monthly budget of that many hours or of those hours / 24 days.
    hours_per_month: f64,
    /// CNY per euro (`catalog/billing.toml`); 0 when the catalog gives none.
    eur_cny: f64,
    /// Cards without BF16 (`bf16 = false` in gpus.toml): training on one is the pitfall
    /// `pitfall-inference-card-training` whatever words ask it.
    no_bf16: Vec<String>,
}

impl Parser {
    pub fn new(lex: Lexicon, cat: &Catalog) -> Parser {
        Parser {
            entities: Entities::new(cat),
            memory_wish: MemoryWish::new(cat),
            models: Models::new(cat),
            quantities: Quantities::new(&lex),
            triggers: Triggers::new(cat),
            hours_per_month: cat.billing.hours_per_month,
            eur_cny: cat.billing.eur_cny.unwrap_or(0.0),
            no_bf16: cat
                .gpus
                .iter()
                .filter(|g| !g.bf16)
                .map(|g| g.id.clone())
                .collect(),
            lex,
        }
    }

    pub fn lexicon(&self) -> &Lexicon {
        &self.lex
    }

    /// Every example question of `cat`'s topics routed with itself left out of the
    /// router's index: whether the others stand for it (`gpu-advisor check`).
    pub fn topic_leave_one_out(&self, cat: &Catalog) -> Vec<LooCase> {
        self.triggers
            .leave_one_out(cat, &|q| normalise::question(&self.lex, q))
    }

    /// What `question` lacked for an answer (see [`Missing`]): a model it names that the
    /// catalog does not know, then a number no slot read, then a model for the workload
    /// words it has (a task or a card), else a topic, with the nearest ones.
    pub fn missing(&self, question: &str) -> Missing {
        let p = self.parse(question, 1.0);
        let a = &p.asked;
        if let Some(m) = &p.unknown_model {
            return Missing::Model(m.clone());
        }
        let text = normalise::question(&self.lex, question);
        let read = a.size_b.is_some()
            || a.budget_cny.is_some()
            || a.context.is_some()
            || a.concurrency.is_some()
            || a.gpu_count.is_some()
            || a.months.is_some()
            || a.train_tokens.is_some()
            || a.micro_batch.is_some()
            || !a.gpus.is_empty()
            || a.model.is_some();
        if has_number(&text) && !read {
            return Missing::Number;
        }
        if (a.task.is_some() || !a.gpus.is_empty()) && !a.has_workload() {
            return Missing::Model(String::new());
        }
        Missing::Topic(self.triggers.nearest(&text, 3))
    }

    /// Parses one question. Asides ahead of it (someone else's claim, an earlier attempt,
    /// a price seen elsewhere) state no cards, counts or budgets of the question's; a
    /// workload they describe stands when the question names none ([`aside`]).
    pub fn parse(&self, raw: &str, usd_cny: f64) -> Parsed {
        let text = normalise::question(&self.lex, raw);
        let full = self.parse_one(raw, text.clone(), usd_cny);
        if full.empty {
            return full;
        }
        // The questions that close a long message, parsed once for both uses below.
        let closing = aside::last_question(&text).map(|question| {
            let q = self.parse_one(&question, question.clone(), usd_cny);
            (question, q)
        });
        if let Some((question, q)) = &closing {
            if let Some(p) = self.closing_topic(&full, question, q) {
                return p;
            }
        }
        let mut p = self.parse_asides(full, &text, usd_cny);
        if let Some((_, q)) = &closing {
            closing_card(&mut p, q);
        }
        p
    }

    /// The question after asides (someone else's claim, an earlier attempt, a price seen
    /// elsewhere), with the workload they describe when it names none.
    fn parse_asides(&self, full: Parsed, text: &str, usd_cny: f64) -> Parsed {
        if !full.aside_marked {
            return full;
        }
        let Some((question, led)) = aside::question_only(&self.lex, text) else {
            return full;
        };
        // Normalised already: normalising twice changes nothing.
        let mut p = self.parse_one(&question, question.clone(), usd_cny);
        // The question alone asks a topic and nothing of a workload ("是不是因为机器没有
        // NVLink？"): the workload the asides describe is its background.
        let topic_only = asks_only_a_topic(&p, &p.cues);
        let replaces = p.cue(Cue::Replace) || p.cue(Cue::Instead);
        let (a, f) = (&mut p.asked, &full.asked);
        // "…Qwen2.5-Coder-7B… is one A100 enough for a 7B model?": the model named, at the
        // size the question says again.
        let same_size = a.model.is_none()
            && f.model
                .as_deref()
                .and_then(|m| self.models.id_size(m))
                .is_some_and(|s| a.size_b.is_some_and(|b| (b - s).abs() < 0.05));
        if a.model.is_none() && (a.size_b.is_none() || same_size) {
            a.model.clone_from(&f.model);
            a.size_b = f.size_b;
            a.active_b = f.active_b;
            if p.unknown_model.is_none() {
                p.unknown_model.clone_from(&full.unknown_model);
                p.family_named = full.family_named;
            }
        }
        if a.task.is_none() {
            a.task = f.task;
        }
        if a.precision.is_none() {
            a.precision = f.precision;
        }
        if a.context.is_none() {
            a.context = f.context;
        }
        if a.train_tokens.is_none() {
            a.train_tokens = f.train_tokens;
        }
        // A requirement stands wherever it was said ("按要求只能用国产算力…请问：8 张 910B
        // 能不能跑满血版 DeepSeek-R1？").
        a.domestic |= f.domestic;
        // After a lead ("想确认一下：按这个量，4 张 A100 40G 到底够不够？") the background is
        // the customer's own: its load too.
        if led {
            if a.concurrency.is_none() {
                a.concurrency = f.concurrency;
            }
            if !a.serving.stated() {
                a.serving = f.serving.clone();
            }
        }
        // "Would 4 cards work?" after an attempt on one kind of card: that card. "is this
        // config just impossible?", "24G 是不是就不够?" after an attempt: the cards tried.
        let asks_of_it = p.cues.contains(&Cue::Feasibility)
            && !p.cues.contains(&Cue::RecommendAsk)
            && !p.cues.contains(&Cue::Recommend);
        if a.gpus.is_empty() && asks_of_it {
            a.gpus.clone_from(&f.gpus);
            a.gpu.clone_from(&f.gpu);
            a.gpu_count = a.gpu_count.or(f.gpu_count);
        }
        if a.gpus.is_empty() && a.gpu_count.is_some() {
            a.gpus.clone_from(&f.gpus);
            a.gpu.clone_from(&f.gpu);
        }
        // "…on your V100S box crashes. What card should I use instead?": the cards it is
        // about are the ones to replace.
        if a.gpus.is_empty() && replaces {
            a.gpus.clone_from(&f.gpus);
            a.gpu.clone_from(&f.gpu);
            a.gpu_count = f.gpu_count;
        }
        // The topics of the whole message, when it has any: an aside says what a topic
        // question is about ("Hardware died mid-training last time… How fast do you move
        // us?").
        if !full.topics.is_empty() {
            p.topics.clone_from(&full.topics);
            p.near_topics.clone_from(&full.near_topics);
        }
        p.lang = full.lang;
        p.lang_sure = full.lang_sure;
        p.background |= topic_only;
        p
    }

    /// A long message that closes with a question of a topic alone, after background
    /// sentences that may state a workload ("…我们这个服务跑的是 Qwen3-14B，在你们的 A100
    /// 上。请问 KV cache 和最大并发数到底是怎么算出来的？"): that question decides. Its parse,
    /// with the workload of the whole message as its background ([`aside::last_question`]).
    fn closing_topic(&self, full: &Parsed, question: &str, q: &Parsed) -> Option<Parsed> {
        let mut p = q.clone();
        // A sure sign of the topic, a trigger: a short question's words are too few for
        // the examples to tell a topic from "Which config gets it done cheapest?".
        let more = [
            Cue::Help,
            Cue::CheapestAsk,
            Cue::CountAskMachines,
            Cue::Replace,
            Cue::Instead,
            Cue::Escalate,
        ];
        // Asked of the topic's own subject, not of the workload: whether a disk is big
        // enough ("数据盘要多大才够？"), where a copy can run ("推理能不能在新加坡和国内各放一份
        // 副本？", with no card anywhere), what else is charged ("除了月租之外，还有没有其他
        // 收费？", no amount asked).
        let (q, f) = (&p.asked, &full.asked);
        // A price asked of a card or slice named in the question itself ("想问下：4 张 A100
        // 40G 月付总共多少钱？如果转年付又怎么算？", "What's the smallest slice you rent…
        // how much is it per month?"): that price, whatever the background sizes.
        let priced = p.cue(Cue::Price)
            && p.amount_asked
            && !q.has_workload()
            && (q.gpus.len() == 1 || p.cue(Cue::Slice) && q.gpus.is_empty())
            && ![
                Cue::Feasibility,
                Cue::RecommendAsk,
                Cue::CheapestAsk,
                Cue::CountAsk,
                Cue::Compare,
            ]
            .iter()
            .any(|&c| p.cue(c));
        if priced {
            p.lang = full.lang;
            p.lang_sure = full.lang_sure;
            p.asked.domestic |= f.domestic;
            p.background = true;
            return Some(p);
        }
        // A can-you of the provider's service ("不够的话能不能扩容", "Can you issue
        // invoices…?") asks no verdict; nor does which cards have a feature.
        let policy = self.lex.has(Slot::AskPolicy, question);
        let mut cues = p.cues.clone();
        cues.retain(|&c| match c {
            Cue::Price => p.amount_asked,
            Cue::Feasibility | Cue::Recommend if p.cue(Cue::StorageAsk) => !q.gpus.is_empty(),
            Cue::Feasibility if policy => !q.gpus.is_empty(),
            Cue::Feasibility => !q.gpus.is_empty() || !f.gpus.is_empty(),
            Cue::Recommend if p.cue(Cue::FeatureAsk) => false,
            _ => true,
        });
        // The size of the provider's machines asked about ("Where are your H100 machines
        // located?") is no count of the customer's.
        if p.cue(Cue::CardYours) {
            p.asked.gpu_count = None;
        }
        if !asks_only_a_topic(&p, &cues)
            || more.iter().any(|&c| p.cue(c))
            || self.triggers.route(question, false).topics.is_empty()
            // "…up to 200 concurrent users. Is H100 overkill here?": the load is sized
            // ([`topics::workload_is_background`]).
            || p.cue(Cue::Overkill) && full.asked.states_a_load()
        {
            return None;
        }
        let (a, f) = (&mut p.asked, &full.asked);
        a.model.clone_from(&f.model);
        a.size_b = f.size_b;
        a.active_b = f.active_b;
        a.task = a.task.or(f.task);
        a.precision = a.precision.or(f.precision);
        a.context = a.context.or(f.context);
        a.train_tokens = a.train_tokens.or(f.train_tokens);
        a.concurrency = a.concurrency.or(f.concurrency);
        if !a.serving.stated() {
            a.serving = f.serving.clone();
        }
        // A model the catalog does not know in the background ("a Qwen-based shopping
        // assistant") is not what the topic question asks about.
        p.unknown_model = None;
        p.family_named = full.family_named;
        p.lang = full.lang;
        p.lang_sure = full.lang_sure;
        p.background = true;
        Some(p)
    }

    /// Parses one question, `text` being `raw` normalised.
    fn parse_one(&self, raw: &str, text: String, usd_cny: f64) -> Parsed {
        let mut p = Parsed {
            empty: text.is_empty(),
            ..Parsed::default()
        };
        if let Some((lang, sure)) = normalise::lang(&text) {
            p.lang = Some(lang);
            p.lang_sure = sure;
        }
        if p.empty {
            return p;
        }
        let lex = &self.lex;
        p.question = normalise::is_question(&text);
        let scan = lex.scan(&text);
        for &cue in Cue::ALL {
            if lex.has_in(&scan, cue) {
                p.cues.push(cue);
            }
        }
        // "有一家 3090 报价 1100/月": the price word of a price quoted elsewhere asks no price;
        // nor does "the KV cost of each extra slot".
        if p.cue(Cue::Price) && !price_asked_beyond_quotes(lex, &scan, &text) {
            p.cues.retain(|&c| c != Cue::Price);
        }
        p.amount_asked = lex.has_in(&scan, Slot::AmountAsk);
        p.aside_marked = [
            Slot::AsideOther,
            Slot::AsideFailed,
            Slot::AsideOwned,
            Slot::AsideLead,
        ]
        .into_iter()
        .any(|s| lex.has_in(&scan, s));
        p.claim_checked = lex.has_in(&scan, Slot::AsideVerify);
        p.duration_asked = lex.has_in(&scan, Slot::AskDuration);
        p.card_variant_gb = lex
            .find_in(&scan, Slot::CardVariant, &text, false)
            .map(|f| f.value);
        let a = &mut p.asked;

        p.addons = [
            (Slot::AddonCpu, "cpu"),
            (Slot::AddonRam, "ram"),
            (Slot::AddonDisk, "disk"),
            (Slot::AddonBandwidth, "bandwidth"),
        ]
        .into_iter()
        .filter(|&(s, _)| lex.has_in(&scan, s))
        .map(|(_, k)| k)
        .collect();
        let mut facts = CardFacts::default();
        let blanked = self.entities.cards(lex, &scan, &text, a, &mut facts);
        p.count_at_card = facts.count_at_card;
        self.memory_wish.read(&blanked, a);
        a.model = self.models.model(lex, &scan, &text);
        p.unknown_model = unknown::not_in_catalog(&text, normalise::cut(raw), a);
        p.family_named = p
            .unknown_model
            .as_deref()
            .is_some_and(|m| self.models.is_family(m));
        p.invalid = slots::size(lex, blanked.clone(), a);
        let native = slots::task_and_precision(lex, &scan, &text, a);
        // Changes relative to the last turn first: their numbers are no other slot's.
        let spans = change::relative(lex, &scan, &text, usd_cny, a);
        let (mut num_text, mut num_blanked) = (Cow::Borrowed(text.as_str()), blanked);
        for &(from, to) in &spans {
            let blank = " ".repeat(to - from);
            num_text.to_mut().replace_range(from..to, &blank);
            num_blanked.replace_range(from..to, &blank);
        }
        // Every number, typed; the slots' own patterns claim theirs first.
        let quantities = self.quantities.read(lex, &scan, &num_blanked);
        let mut claimed: Vec<(usize, usize)> = spans;
        p.invalid = slots::numbers(
            lex,
            &scan,
            &num_text,
            &num_blanked,
            slots::Fx {
                usd_cny,
                eur_cny: self.eur_cny,
            },
            self.hours_per_month,
            &quantities,
            &mut claimed,
            &mut p.budget_low,
            a,
            p.invalid.take(),
        );
        // Training on a data size of 100B tokens or more is pretraining (DOMAIN.md §6),
        // unless the question said how it trains (LoRA, fine-tuning, full fine-tuning).
        if a.task == Some(Task::Full)
            && !lex.has_in(&scan, Slot::TaskFull)
            && a.train_tokens.is_some_and(|t| t >= PRETRAIN_TOKENS)
        {
            a.task = Some(Task::Pretrain);
        }
        // "数据量 20 亿 token，要跑多久": running a data set is training; the task is the
        // one said before, or the default for its size.
        if a.task == Some(Task::Inference)
            && a.train_tokens.is_some()
            && lex.has_in(&scan, Slot::AskDuration)
        {
            a.task = None;
        }
        serving::serving(lex, &scan, &num_text, &mut claimed, a);
        slots::request_tokens(lex, &scan, &num_text, &claimed, a);
        slots::by_kind(&quantities, &claimed, a);
        // "half a year" is six months, not a year's rental.
        a.annual = p.cues.contains(&Cue::Annual)
            && match lex.find_in(&scan, Slot::MonthsHalf, &text, false) {
                Some(f) => {
                    let mut rest = text.clone();
                    rest.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
                    lex.find(Cue::Annual, &rest).is_some()
                }
                None => true,
            };
        a.slice = p.cues.contains(&Cue::Slice);
        // "年付", "包年", "annual": a rental of a year when no other length is said.
        if a.annual && a.months.is_none() {
            a.months = Some(ANNUAL_MONTHS);
        }
        // "不要国产卡，要 CUDA 生态" declines domestic cards: a wish only when not negated.
        let domestic_declined = p.cues.contains(&Cue::Domestic)
            && lex.has_in(&scan, Slot::NegationWord)
            && lex
                .find(Cue::Domestic, &text)
                .is_some_and(|m| slots::negated(lex, &text, m.start));
        a.domestic_lifted = lex.has_in(&scan, Slot::DomesticLifted);
        a.domestic = p.cues.contains(&Cue::Domestic) && !domestic_declined && !a.domestic_lifted;
        a.no_domestic = domestic_declined;
        if native && a.precision.is_some_and(|p| p.is_quantized()) {
            a.precision = None; // the model's native precision: the default
        }
        if a.task == Some(Task::Inference) && a.concurrency.is_none() {
            a.concurrency = a.micro_batch.take();
        }
        p.modifiers = a.task.is_some() || native || !a.gpus.is_empty() || a.states_a_setting();
        p.recipe_stated = recipe::read(lex, &scan, &text, &mut p.asked);
        p.modifiers |= p.recipe_stated;
        // A language asked for the replies, in a turn that describes no workload (not "a
        // bot that answers in English").
        if !p.asked.has_workload() && p.asked.task.is_none() {
            p.reply_lang = change::reply_lang(lex, &scan);
        }
        p.background = topics::workload_is_background(&p, lex.has_in(&scan, Slot::CardWord));
        let open = topics::examples_apply(&p) || p.background;
        let breaks: Vec<usize> = lex
            .all_in(&scan, Slot::QuestionBreak, &text, false)
            .iter()
            .map(|f| f.start)
            .collect();
        let mut routed = self.triggers.route_questions(&text, &breaks, open);
        // Two topics tied for a question whether a named card will do ("需要 80G 显存，A100
        // 40G 够吗"): the examples only brush it; it is the card's question.
        if routed.tie && !p.asked.gpus.is_empty() && p.cue(Cue::Feasibility) {
            routed.topics.clear();
        }
        p.topics = routed.topics;
        p.near_topics = routed.near;
        // "Our credits only cover T4s. Is it a bad idea to run LoRA training on those?":
        // training, no model, and the one card named cannot train (no BF16).
        if !p.asked.has_workload()
            && p.asked.task.is_some_and(|t| t.is_training())
            && p.asked.gpus.len() == 1
            && self.no_bf16.contains(&p.asked.gpus[0])
        {
            const PITFALL: &str = "pitfall-inference-card-training";
            p.topics.retain(|t| t != PITFALL);
            p.topics.insert(0, PITFALL.to_string());
            p.near_topics.clear();
        }
        // "下个月要全参训练 Qwen2.5-7B，原始语料大概 2TB，存储怎么配？": the workload is
        // stated, the question is the disk's.
        if !p.background && p.asked.has_workload() && p.asked.budget_cny.is_none() {
            if let Some(topics) = self.asks_beside_workload(&text, usd_cny) {
                p.background = true;
                for t in std::mem::take(&mut p.topics) {
                    if !topics.contains(&t) {
                        p.topics.push(t);
                    }
                }
                p.topics.splice(0..0, topics);
                p.near_topics.clear();
            }
        }
        p
    }

    /// The topics a message asks about beside the workload it states ("下个月要全参训练
    /// Qwen2.5-7B，原始语料大概 2TB，存储怎么配？"): each of its questions (the clauses that
    /// ask, [`topics::clauses`]) has a trigger word of a topic about the service or the fees,
    /// or none of any topic and no question of its own beside them ("数据会不会丢？"), and
    /// none of a topic about the cards (`topics.toml` `about`: "存储怎么配" and "节点怎么
    /// 选" choose a disk and a node, not a card); names no model, size, card or budget; asks
    /// neither whether it runs, how many, how fast (nor names a serving metric: "首 token
    /// 延迟" is not the network's) nor a price beyond the topic's own words
    /// ("Are there extra costs?" and "月付和年付差多少" ask the fees; "按月付多少钱" and
    /// "what is the monthly cost?" price the workload); and the statements ask nothing of
    /// the cards ("帮我推荐个配置跑 Qwen-7B，另外有香港节点吗？" wants the configuration).
    /// `None` when any of that fails.
    fn asks_beside_workload(&self, text: &str, usd_cny: f64) -> Option<Vec<String>> {
        let lex = &self.lex;
        let clauses = topics::clauses(text);
        let (questions, statements): (Vec<_>, Vec<_>) = clauses
            .iter()
            .map(|&(from, to)| &text[from..to])
            .partition(|c| topics::clause_asks(c));
        if questions.is_empty() || statements.is_empty() {
            return None;
        }
        let mut topics: Vec<String> = Vec::new();
        for q in questions {
            let found = self.triggers.route(q, false).topics;
            let about: Vec<TopicAbout> = found.iter().map(|t| self.triggers.about(t)).collect();
            if about.contains(&TopicAbout::Cards) {
                return None;
            }
            let sub = self.parse(q, usd_cny);
            let a = &sub.asked;
            let scan = lex.scan(q);
            let asks_cards = [
                Cue::RecommendAsk,
                Cue::Feasibility,
                Cue::CountAsk,
                Cue::CountAskMachines,
            ]
            .iter()
            .any(|&c| sub.cue(c))
                || [
                    Slot::AskDuration,
                    Slot::AsksMaxConcurrency,
                    Slot::AsksMaxContext,
                    Slot::AsksThroughput,
                    Slot::AsksSpeed,
                    Slot::ServingMetric,
                ]
                .iter()
                .any(|&s| lex.has_in(&scan, s));
            // A clause with no topic of its own ("数据会不会丢？") may follow one that
            // has one, as long as it asks nothing else: no configuration ("怎么配比较稳"),
            // price, comparison or diagnosis.
            let priced = sub.cue(Cue::Price)
                && (found.is_empty()
                    || lex
                        .find(Cue::Price, &self.triggers.without_triggers(q))
                        .is_some());
            let asks_other = found.is_empty()
                && [
                    Cue::Recommend,
                    Cue::Compare,
                    Cue::Budget,
                    Cue::Diagnostic,
                    Cue::Help,
                    Cue::Overkill,
                ]
                .iter()
                .any(|&c| sub.cue(c));
            if a.has_workload()
                || !a.gpus.is_empty()
                || a.budget_cny.is_some()
                || asks_cards
                || priced
                || asks_other
            {
                return None;
            }
            for t in found {
                if !topics.contains(&t) {
                    topics.push(t);
                }
            }
        }
        let told = statements.concat();
        let scan = lex.scan(&told);
        let asks = [
            Cue::Recommend,
            Cue::RecommendAsk,
            Cue::Feasibility,
            Cue::CountAsk,
            Cue::CountAskMachines,
            Cue::Compare,
            Cue::Budget,
        ];
        if asks.iter().any(|&c| lex.has_in(&scan, c)) {
            return None;
        }
        (!topics.is_empty()).then_some(topics)
    }
}

#[cfg(test)]
mod tests;

/// A long message whose closing question `q` asks whether the cards it names do it ("…本地有
/// 两张 3090……打算租两张 4090 替换。问题是：两张 4090 直接跑 BF16 原版，能跑得起来吗？"):
/// those cards, not the ones the background named first.
fn closing_card(p: &mut Parsed, q: &Parsed) {
    if p.background || p.asked.gpus.is_empty() {
        return;
    }
    let asks = q.cue(Cue::Feasibility) && !q.cue(Cue::RecommendAsk) && !q.cue(Cue::Compare);
    if asks && q.asked.gpus.len() == 1 && p.asked.gpus.first() != q.asked.gpus.first() {
        let a = &mut p.asked;
        a.gpus.retain(|g| *g != q.asked.gpus[0]);
        a.gpus.insert(0, q.asked.gpus[0].clone());
        a.gpu.clone_from(&q.asked.gpu);
        a.gpu_count = q.asked.gpu_count;
    }
}

/// A question that asks a topic and nothing of a workload: no workload of its own, no two
/// cards, no count, and none of the cues that ask what to rent, whether it runs, a price or
/// a budget ("是不是因为机器没有 NVLink？"). `cues` are the question's cues, or those of
/// them that count.
fn asks_only_a_topic(p: &Parsed, cues: &[Cue]) -> bool {
    let asks = [
        Cue::Feasibility,
        Cue::Recommend,
        Cue::RecommendAsk,
        Cue::CountAsk,
        Cue::Price,
        Cue::Budget,
    ];
    !p.topics.is_empty()
        && !p.asked.has_workload()
        && p.asked.gpus.len() < 2
        && p.asked.gpu_count.is_none()
        && !asks.iter().any(|c| cues.contains(c))
}

/// Whether the price cue holds in `text` with every quoted price ("报价 1100", "they
/// charge $2") and every other provider's quote ("有家报价 A100 比你们便宜一千多")
/// blanked out.
fn price_asked_beyond_quotes(lex: &Lexicon, scan: &Scan, text: &str) -> bool {
    let mut blanked = text.to_string();
    let mut any = false;
    let asides = lex
        .all_in(scan, Slot::QuoteElsewhere, text, false)
        .into_iter()
        .chain(lex.all_in(scan, Slot::CostNotMoney, text, false));
    for f in asides {
        blanked.replace_range(f.start..f.end, &" ".repeat(f.end - f.start));
        any = true;
    }
    for (at, _) in text.match_indices(|c: char| c.is_ascii_digit()) {
        if at > 0 && text[..at].ends_with(|c: char| c.is_ascii_digit() || c == '.') {
            continue;
        }
        if let Some(start) = slots::quoted_price_before(lex, text, at) {
            blanked.replace_range(start..at, &" ".repeat(at - start));
            any = true;
        }
    }
    !any || lex.find(Cue::Price, &blanked).is_some()
}
