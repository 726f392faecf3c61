//! The intent of a turn: what kind of answer a question wants, and for a follow-up
//! (`那 INT4 呢`, `并发 100 呢`, `年付多少`) this turn's `Asked` laid over the previous one's.
//! `State` is what a conversation keeps between turns, a plain serde value the caller
//! stores. Decisions only: no estimate, no search and no wording here.

use super::lexicon::Cue;
use super::parse::{Lang, Parsed};
use super::workload::Asked;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    Recommend,
    Feasibility,
    Compare,
    Budget,
    Price,
    Faq,
    Help,
    Unknown,
}

impl Intent {
    pub fn id(self) -> &'static str {
        match self {
            Intent::Recommend => "recommend",
            Intent::Feasibility => "feasibility",
            Intent::Compare => "compare",
            Intent::Budget => "budget",
            Intent::Price => "price",
            Intent::Faq => "faq",
            Intent::Help => "help",
            Intent::Unknown => "unknown",
        }
    }
}

/// What a conversation remembers between turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub turns: u32,
    pub last: Option<Turn>,
    /// The language the customer asked the replies in ("answer in English"), from that
    /// turn on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<Lang>,
    /// The language of the last reply, for a turn that does not show its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_lang: Option<Lang>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub intent: Intent,
    pub asked: Asked,
    /// The knowledge topics the turn was answered with (an FAQ asked again in another
    /// language).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// For a topic asked in passing ("能开专票吗" between a quote and "年付的话呢"): the
    /// intent the conversation's question was last answered with, which a follow-up goes
    /// on from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Intent>,
}

impl Turn {
    /// The intent a follow-up modifies: the conversation's question, across topics asked
    /// in passing.
    pub fn question_intent(&self) -> Intent {
        self.kept.unwrap_or(self.intent)
    }
}

/// A turn that only asks for the replies' language ("换成英文回答", "English please"):
/// the last answer again, in that language.
pub fn only_reply_lang(p: &Parsed) -> bool {
    p.reply_lang.is_some() && !p.modifiers && !p.asked.has_workload() && p.asked.gpus.is_empty()
}

/// "A100 卡之间是走 NVLink 吗", "你们的 3090 是不是矿卡啊", "游戏卡做训练靠谱吗" in the
/// middle of a conversation: a question of a topic asked in passing. It may name a card or
/// say "训练", but it states no number, no requirement and no ask of its own (whether
/// something fits, what to rent, a price, a change), so nothing of the conversation's
/// workload changes.
pub fn passing_topic(p: &Parsed, prev: Option<&Turn>) -> bool {
    let a = &p.asked;
    let asks = [
        Cue::Feasibility,
        Cue::Followup,
        Cue::Recommend,
        Cue::RecommendAsk,
        Cue::CountAsk,
        Cue::CountAskMachines,
        Cue::CheapestAsk,
        Cue::Replace,
        Cue::Instead,
        Cue::Price,
        Cue::Budget,
    ];
    // The size of the provider's machine asked about ("Is your 8x A100 80GB a single
    // node…?") is no count of the customer's.
    let yours = p.cue(Cue::CardYours);
    let counted = a.gpu_count.is_some() && !yours;
    let setting = a.states_a_setting_but_count();
    let states = setting || counted || a.gpus.len() > 1 || a.whole_cards || p.recipe_stated;
    // A method named ("普通 LoRA 就行") changes the task; a plain "训练" does not, nor one
    // in what others say ("People say fine-tuning on several 4090s is slow. True?"), nor
    // what others ran beside a question of the provider's cards ("Saw people running zero3
    // on 4090s. Do your 4090 boxes have NVLink?").
    let others = p.aside_marked && p.claim_checked || yours || p.cue(Cue::FeatureAsk);
    let method = a.task.is_some() && !a.task_train_only && !others;
    // A card the conversation is already about, or asked after a feature of ("4090 支持
    // FP8 吗"); another card is a change of card ("ok and on an a100 40g?").
    fn family(g: &str) -> &str {
        g.split('-').next().unwrap_or(g)
    }
    // A card in what others say or in a why ("People say training on several 3090s
    // together is slow. True?", "为什么我们在 4090 上生成才 7 token/s") is the subject of
    // the topic, not a change of card.
    let card_kept = a.gpus.iter().all(|g| {
        p.cue(Cue::FeatureAsk)
            || yours
            || p.aside_marked
            || p.cue(Cue::Why)
            || prev.is_some_and(|t| t.asked.gpus.iter().any(|h| family(h) == family(g)))
    });
    !p.topics.is_empty()
        && !method
        && card_kept
        && !a.has_workload()
        && !states
        && !p.amount_asked
        && !asks.iter().any(|&c| p.cue(c))
}

/// A question that names nothing of a workload or a configuration: no model, no card, no
/// number, no setting ("顺便问下能开专票吗", "what happens if the server goes down?").
/// Whatever it asks, the conversation's question stays what it was.
pub fn states_nothing(p: &Parsed) -> bool {
    let a = &p.asked;
    !a.has_workload()
        && a.gpus.is_empty()
        && !a.states_a_setting()
        && !a.whole_cards
        && !p.recipe_stated
        && !p.amount_asked
}

/// Decides the intent, and for a follow-up lays this turn over the previous one.
pub fn decide(p: &Parsed, prev: Option<&Turn>) -> (Intent, Asked, bool) {
    let a = &p.asked;
    if p.empty || p.invalid.is_some() {
        let intent = if p.invalid.is_some() {
            Intent::Unknown
        } else {
            Intent::Help
        };
        return (intent, a.clone(), false);
    }
    if p.cue(Cue::Help) {
        return (Intent::Help, a.clone(), false);
    }
    // A model the catalog does not know and no size to go by: ask for it, never answer
    // another question (a price list) as if it were this one; a family named in passing
    // ("we fine-tune a Qwen3 model every week") leaves a topic question a topic question. Cards set against each other
    // are still compared ("3090 vs 4090 vs A100, mostly stable diffusion stuff").
    if p.unknown_model.is_some()
        && !a.has_workload()
        && (p.topics.is_empty() || (p.modifiers && !p.family_named))
        && a.gpus.len() < 2
    {
        return (Intent::Unknown, a.clone(), false);
    }
    if only_reply_lang(p) {
        return match prev {
            Some(prev) => (prev.intent, prev.asked.clone(), true),
            None => (Intent::Help, a.clone(), false),
        };
    }
    let has_workload = a.has_workload();
    // Card against card in any phrasing is a comparison, with or without a workload.
    // "Can a 4090 handle it, or do we need an A100?" asks about the first card.
    let compare = a.gpus.len() >= 2 && p.cue(Cue::Compare) && !p.cue(Cue::Escalate);
    // "要是年付之后项目中途黄了，剩下的钱能退吗": whether money comes back is the billing
    // policy's question, whatever period or price words come with it.
    // "直接签一年年付是不是最划算？": whether a way of paying is wise, the same.
    let worth = p.cue(Cue::WorthAsk) && (p.cue(Cue::Annual) || a.annual) && !has_workload;
    if (p.cue(Cue::RefundAsk) || worth) && !p.topics.is_empty() && !p.amount_asked && !compare {
        return (Intent::Faq, a.clone(), false);
    }
    // "为什么 4090 算力比 A100 高，A100 还贵那么多": asked why, with a topic that says
    // why, not which card to take; in a conversation too ("为什么我们在 4090 上生成才 7
    // token/s，是显存带宽的问题吗？" after a workload), unless it goes on from the last turn.
    // "why not a 4090?", "why so many GPUs for LoRA?" after a workload's answer: that
    // workload again, on the card the why names (its verdict says why not) or as answered.
    if let Some(prev) = prev.filter(|t| {
        p.cue(Cue::WhyAnswer)
            && !has_workload
            && t.asked.has_workload()
            && matches!(t.question_intent(), Intent::Recommend | Intent::Feasibility)
            && a.gpus.len() < 2
    }) {
        let mut merged = a.over(&prev.asked);
        // "why not a 4090?" reads the card as declined: it is the card asked about.
        let named = match (a.gpus.as_slice(), a.declined.as_slice()) {
            ([g], _) | ([], [g]) => Some(g.clone()),
            _ => None,
        };
        let Some(g) = named else {
            return (prev.question_intent(), merged, true);
        };
        merged.declined.retain(|d| *d != g);
        if a.gpus.is_empty() {
            merged.gpu_count = None;
        }
        merged.gpu = Some(g.clone());
        merged.gpus = vec![g];
        return (Intent::Feasibility, merged, true);
    }
    let why =
        p.cue(Cue::Why) && !p.topics.is_empty() && !p.cue(Cue::Feasibility) && !p.cue(Cue::Price);
    if why && (prev.is_none() || !p.cue(Cue::Followup)) {
        return (Intent::Faq, a.clone(), false);
    }
    // A follow-up: something that modifies the last turn, without a workload of its own
    // or introduced as one ("那 7B 呢"). Topic-only questions and comparisons stand alone.
    if let Some(prev) = prev {
        // "so which card should I rent?" after a workload: that workload's configuration,
        // whatever topic its words brush against.
        // "what would you rent instead" after a verdict: the same, without the cards it
        // was about.
        // "what's the cheapest config that runs it?": the same over every card.
        let replace = p.cue(Cue::Replace) || p.cue(Cue::Instead);
        let cheapest = p.cue(Cue::CheapestAsk);
        // "how many cards is that": the same, counted.
        // "What should we rent instead for LoRA on Qwen2.5-7B?": the same, with the model
        // restated.
        if (p.cue(Cue::RecommendAsk) || p.cue(Cue::CountAsk) || replace || cheapest)
            && (!has_workload || replace)
            && a.gpus.is_empty()
            && prev.asked.has_workload()
        {
            let mut merged = a.over(&prev.asked);
            // "what single card would you rent": a count of the card asked for, not of
            // the cards said before.
            let count_of_new = a.gpu_count.is_some() && !p.cue(Cue::CountAsk);
            // "那你们推荐怎么配", "what would you rent me for it": the provider's pick, not
            // the cards the customer has or tried.
            let own_pick = p.cue(Cue::RecommendAsk) && !p.cue(Cue::CountAsk);
            if (cheapest || count_of_new || own_pick) && !replace {
                merged.gpus.clear();
                merged.gpu = None;
                merged.gpu_count = a.gpu_count.filter(|_| count_of_new);
            }
            if replace {
                for g in std::mem::take(&mut merged.gpus) {
                    if !merged.declined.contains(&g) {
                        merged.declined.push(g);
                    }
                }
                merged.gpu = None;
                merged.gpu_count = None;
            }
            return (Intent::Recommend, merged, true);
        }
        // "可以开发票吧" then "which machine does that get us?", "那一万五以内，显存最大的是
        // 哪种方案" after a budget question: that budget's answer, at the amount changed.
        // After a workload with its budget, "what's the best you can do for that money?" is
        // the recommendation within it.
        let budget_question = prev.question_intent() == Intent::Budget;
        if prev.asked.budget_cny.is_some()
            && !has_workload
            && a.gpus.is_empty()
            && !compare
            && (p.cue(Cue::Budget)
                || budget_question
                    && (p.cue(Cue::Recommend)
                        || p.cue(Cue::RecommendAsk)
                        || a.changed_to.is_some()))
        {
            let merged = a.over(&prev.asked);
            let intent = if merged.has_workload() {
                Intent::Recommend
            } else {
                Intent::Budget
            };
            return (intent, merged, true);
        }
        // "大概几个小时能跑完" after a training plan: that plan again; its reply gives the
        // hours. "How long would that take on 8x A100 40GB, and what would it cost?": the
        // plan's verdict on those cards, with its hours and price.
        let plan_timed = p.duration_asked
            && !has_workload
            && prev.asked.has_workload()
            && prev.asked.task.is_some_and(|t| t.is_training());
        if plan_timed && a.gpus.len() < 2 && !compare {
            let intent = match prev.question_intent() {
                _ if a.gpus.len() == 1 => Intent::Feasibility,
                Intent::Feasibility | Intent::Recommend => prev.question_intent(),
                _ => Intent::Recommend,
            };
            return (intent, a.over(&prev.asked), true);
        }
        // "What does an A16 slice cost?" then "could it run Qwen2.5-0.5B?": the workload
        // on the card of the last answer.
        if has_workload
            && a.gpus.is_empty()
            && p.cue(Cue::CardReferred)
            && p.cue(Cue::Feasibility)
            && prev.asked.gpus.len() == 1
        {
            let mut kept = a.keeping_constraints_of(&prev.asked);
            kept.gpus.clone_from(&prev.asked.gpus);
            kept.gpu.clone_from(&prev.asked.gpu);
            kept.gpu_count = prev.asked.gpu_count;
            kept.slice = prev.asked.slice;
            return (Intent::Feasibility, kept, true);
        }
        // "那就租一张 4090，先一个月", "就按这个配，月付多少", "go with your pick. how much for
        // 2 months?" after a workload: a quote of the configuration for that workload,
        // on the cards this turn names. "H100 多少钱" alone stays the card's price.
        let settled = p.cue(Cue::Settle);
        // An amount alone ("吃多少显存", "tok/s 能有多少") is money only once settled.
        let price_asked =
            (p.cue(Cue::Price) || settled && p.amount_asked) && a.budget_cny.is_none();
        let quoted = (price_asked
            && (settled
                || a.months.is_some()
                || a.annual
                || a.gpu_count.is_some()
                || a.gpus.is_empty()))
            || (settled && a.months.is_some());
        // A turn that reshapes the load ("it's 200 guests a day in total") asks for the
        // configuration of the new load, priced in its answer.
        if quoted
            && (settled || !a.states_a_load())
            && !has_workload
            && !compare
            && !p.cue(Cue::Feasibility)
            && !p.cue(Cue::CountAsk)
        {
            if prev.asked.has_workload() {
                let mut merged = a.over(&prev.asked);
                merged.quote = true;
                return (Intent::Price, merged, true);
            }
            // "4090 vs 3090?" then "we'll go 4090. two of them, one month": those cards.
            if settled && !a.gpus.is_empty() {
                return (Intent::Price, a.keeping_constraints_of(&prev.asked), false);
            }
        }
        if passing_topic(p, Some(prev)) && !compare {
            return (Intent::Faq, a.clone(), false);
        }
        // "加 1T 数据盘和 200M 带宽，一共多少" after a price: that offer with the add-ons.
        let addons_priced =
            !p.addons.is_empty() && prev.question_intent() == Intent::Price && !has_workload;
        let faq_only = !p.topics.is_empty() && !p.modifiers && !addons_priced;
        // "H100 多少钱" after a workload is a new price question, not "that workload on H100".
        let standalone =
            !p.cue(Cue::Followup) && p.cue(Cue::Price) && !a.gpus.is_empty() && !has_workload;
        let modifies = (p.modifiers && !has_workload)
            || (has_workload && p.cue(Cue::Followup))
            || addons_priced;
        let mut merged = a.over(&prev.asked);
        // An FAQ answer has nothing that "INT4 呢" could modify: the question stands alone.
        let nothing_to_modify = prev.question_intent() == Intent::Faq && !merged.has_workload();
        if modifies && !compare && !faq_only && !standalone && !nothing_to_modify {
            let intent = match prev.question_intent() {
                // "A100 和 H100 差多少" then "那 4090 呢": the card set beside the ones
                // compared.
                // "一台 8 卡 H100 跑 FP8 版本够吗", "4 张 H20 呢": the cards counted, or
                // asked whether they do, are a verdict on the workload.
                Intent::Compare
                    if !has_workload
                        && a.gpus.len() == 1
                        && !p.cue(Cue::Price)
                        && !(merged.has_workload()
                            && (p.cue(Cue::Feasibility) || a.gpu_count.is_some())) =>
                {
                    let mut gpus = a.gpus.clone();
                    gpus.extend(
                        prev.asked
                            .gpus
                            .iter()
                            .filter(|g| !a.gpus.contains(g))
                            .cloned(),
                    );
                    merged.gpu = gpus.first().cloned();
                    merged.gpus = gpus;
                    Intent::Compare
                }
                Intent::Price | Intent::Compare if !has_workload && !merged.has_workload() => {
                    Intent::Price
                }
                // "H100 多少钱" then "那 A100 呢" in a conversation with a workload: still
                // the price.
                // "What about unquantized fp16 on that same T4?" after a price asked in
                // passing changes the workload: its verdict.
                Intent::Price
                    if !has_workload
                        && a.gpus.len() == 1
                        && !p.cue(Cue::Feasibility)
                        && a.precision.is_none()
                        && a.task.is_none()
                        && !a.states_a_load() =>
                {
                    Intent::Price
                }
                _ if !merged.has_workload() && merged.budget_cny.is_some() => Intent::Budget,
                _ if !merged.has_workload() => prev.question_intent(),
                // A workload and a card of its own: as the same question alone.
                _ if has_workload && !a.gpus.is_empty() => workload_intent(p, a),
                // "4090 推荐几张", "换昇腾的话怎么配" after a verdict: a configuration, on
                // the card this turn names if it names one.
                _ if p.cue(Cue::RecommendAsk) && !p.cue(Cue::Escalate) => Intent::Recommend,
                // "Forgot to say: it has to run on domestic hardware (Ascend)" after a
                // recommendation: the recommendation under that requirement, not a verdict
                // on the card the requirement names.
                Intent::Recommend
                    if a.domestic && !p.cue(Cue::Feasibility) && !p.cue(Cue::Price) =>
                {
                    Intent::Recommend
                }
                // "只考虑 A100 80G 的话，要几台": how many of that card, a configuration on it.
                _ if a.gpus.len() == 1
                    && (p.cue(Cue::CountAsk) && a.gpu_count.is_none()
                        || p.cue(Cue::CountAskMachines)) =>
                {
                    Intent::Recommend
                }
                _ if a.gpus.len() == 1 && !p.cue(Cue::Recommend) => Intent::Feasibility,
                // A count for the card named before ("用两张呢", "with two of them"): the
                // customer's cards.
                _ if a.gpu_count.is_some() && merged.gpu.is_some() && !p.cue(Cue::Recommend) => {
                    Intent::Feasibility
                }
                _ if a.budget_cny.is_some() => Intent::Recommend,
                // "will it still fit?" after a workload on a card: the verdict on that card.
                _ if p.cue(Cue::Feasibility)
                    && merged.gpu.is_some()
                    && !p.cue(Cue::Recommend)
                    && !p.cue(Cue::RecommendAsk) =>
                {
                    Intent::Feasibility
                }
                Intent::Feasibility | Intent::Recommend => prev.question_intent(),
                _ => Intent::Recommend,
            };
            return (intent, merged, true);
        }
    }
    // A why that closes the message ("everyone says 4090 跑 70B 是个坑, why") asks why the
    // statement before it holds, whatever workload the statement names.
    let why_end = p.cue(Cue::WhyEnd);
    let why_later = p.cue(Cue::WhyLater) && !has_workload && !p.cue(Cue::Feasibility);
    if (why_end || why_later) && !p.topics.is_empty() && a.gpus.len() < 2 && !p.amount_asked {
        return (Intent::Faq, a.clone(), false);
    }
    // "现在 8 张 A100 跑一轮要 30 小时，换成 H100 能快多少？值不值": what moving from the
    // cards one runs on would gain; "Isn't a 4090's FP16 on par with an A100?": a belief put
    // for confirmation. With a topic that answers it, no workload, load or amount, and
    // nothing else asked, the topic's answer (which does not adopt the belief).
    let asks_else = [
        Cue::Feasibility,
        Cue::Recommend,
        Cue::RecommendAsk,
        Cue::CountAsk,
        Cue::Budget,
        Cue::CheapestAsk,
    ]
    .iter()
    .any(|&c| p.cue(c));
    // A belief that sets two cards against each other ("H20 vs H100 for inference?") is
    // their comparison; a move is asked of two cards whatever words compare them.
    // The amount a move asks is its gain ("能快多少").
    let belief = p.cue(Cue::BeliefConfirm) && !p.cue(Cue::Price) && !compare && !p.amount_asked;
    if (p.cue(Cue::MoveAsk) || belief)
        && !asks_else
        && !has_workload
        && !p.topics.is_empty()
        && !a.states_a_load()
    {
        return (Intent::Faq, a.clone(), false);
    }
    // "does the 4090 have FP8, or is that an H100-only thing?": whether a card has a
    // feature, the topic's answer.
    if p.cue(Cue::FeatureAsk) && !p.topics.is_empty() && !has_workload {
        return (Intent::Faq, a.clone(), false);
    }
    // "A100 PCIe vs SXM: does NVLink actually matter…?": forms of one card set against
    // each other, or a feature against its absence, which the topic explains; the
    // workload beside it is the background. A load stated ("request-rate 12 … 该加 GPU 还是加
    // replica") is sized instead.
    if p.cue(Cue::Compare)
        && a.gpus.len() < 2
        && !p.topics.is_empty()
        && !p.amount_asked
        && !a.states_a_load()
        && ![
            Cue::Feasibility,
            Cue::Price,
            Cue::Recommend,
            Cue::RecommendAsk,
            Cue::CountAsk,
        ]
        .iter()
        .any(|&c| p.cue(c))
    {
        return (Intent::Faq, a.clone(), false);
    }
    if compare {
        // "那 A100 80G 跟 H100 比呢" after a workload: the cards set against each other for
        // that workload, under what was said before; the count said for other cards goes.
        if let Some(prev) = prev.filter(|t| !has_workload && t.asked.has_workload()) {
            let mut merged = a.over(&prev.asked);
            if a.gpu_count.is_none() {
                merged.gpu_count = None;
            }
            return (Intent::Compare, merged, true);
        }
        let kept = prev.map_or_else(|| a.clone(), |prev| a.keeping_constraints_of(&prev.asked));
        return (Intent::Compare, kept, false);
    }
    // "4 张 3090 训练一直挂……该换什么": the verdict on the cards named, and what to rent
    // instead.
    if has_workload && p.cue(Cue::Replace) && !a.gpus.is_empty() {
        return (Intent::Feasibility, a.clone(), false);
    }
    // A workload as the background of a question the FAQ answers (a diagnosis, the disk).
    if has_workload && !p.topics.is_empty() && p.background {
        return (Intent::Faq, a.clone(), false);
    }
    if has_workload {
        let kept = prev.map_or_else(|| a.clone(), |prev| a.keeping_constraints_of(&prev.asked));
        return (workload_intent(p, a), kept, false);
    }
    if p.cue(Cue::Offtopic) && a.gpus.is_empty() {
        return (Intent::Unknown, a.clone(), false);
    }
    if a.budget_cny.is_some() {
        return (Intent::Budget, a.clone(), false);
    }
    // "便宜的卡推荐下": no workload to size, so the price list.
    if p.cue(Cue::CheapestAsk) && a.gpus.is_empty() && p.topics.is_empty() {
        return (Intent::Price, a.clone(), false);
    }
    let offer_cue = p.cue(Cue::Slice) || p.cue(Cue::Machine) || p.cue(Cue::Hourly);
    // "do you bill by the hour or only monthly?" asks how billing works, not an amount.
    // "what do you charge for a 3090 per month?" asks the amount.
    let how_billed = p.cue(Cue::BillingMode) && !p.topics.is_empty() && !p.amount_asked;
    // "洛杉矶那台 CPU 服务器多少钱": the CPU servers' price list.
    let cpu_server = p.cue(Cue::CpuServer) && a.gpus.is_empty();
    // "how much is the smallest gpu slice you have?": an amount of an offer, whatever its
    // topic; "A100 40G 如果直接签一年，每个月摊下来能便宜到多少": an amount for a card
    // over a period.
    let offer_amount = offer_cue && (p.topics.is_empty() || p.amount_asked);
    let period_amount = p.amount_asked && !a.gpus.is_empty() && a.months.is_some();
    // "H100 by the hour, what does that come to?": an amount asked of an hourly offer
    // ("整机…延迟差多少" asks no amount of money).
    let offer_asked = p.cue(Cue::Hourly) && p.amount_asked && !a.gpus.is_empty();
    if (p.cue(Cue::Price) || period_amount || offer_asked)
        && !how_billed
        && (!a.gpus.is_empty() || cpu_server || offer_amount)
    {
        return (Intent::Price, a.clone(), false);
    }
    if !p.topics.is_empty() {
        return (Intent::Faq, a.clone(), false);
    }
    if a.gpus.len() >= 2 {
        return (Intent::Compare, a.clone(), false);
    }
    if p.cue(Cue::Price) || a.gpus.len() == 1 {
        return (Intent::Price, a.clone(), false);
    }
    (Intent::Unknown, a.clone(), false)
}

/// A question with a workload: a named card with a can-it cue, or asked as a question
/// without a what-to-rent cue ("4090 跑 70B？"), is a feasibility question; so is a
/// workload on cards the customer counted ("Qwen2.5-72B 用 2 张 A100 80G"), unless it asks
/// the price. Anything else is a recommendation (within the budget, on the card, when given).
fn workload_intent(p: &Parsed, a: &Asked) -> Intent {
    // "只考虑 A100 的机器，几张够？" asks how many of that card: a recommendation on it.
    if p.cue(Cue::CountAsk) && a.gpu_count.is_none() || p.cue(Cue::CountAskMachines) {
        return Intent::Recommend;
    }
    // "8x A100 80GB with Qwen3-235B: how many concurrent requests?", "how many tok/s does
    // Llama 3.1 8B do on one A100 40G?": the capacity or speed of the configuration
    // named, not another one.
    // "ollama 在 3090 上跑 qwen2.5:14b，一秒能出多少 token": the card named, even uncounted.
    if !a.gpus.is_empty()
        && (a.gpu_count.is_some() || a.serving.asks_speed)
        && (a.serving.asks_max_concurrency
            || a.serving.asks_max_context
            || a.serving.asks_speed
            || a.serving.asks_throughput)
        && !p.cue(Cue::RecommendAsk)
    {
        return Intent::Feasibility;
    }
    // "之前有人说单张 4090 就够了……请给出推荐配置": a configuration asked for outright.
    if p.cue(Cue::RecommendAsk) && !p.cue(Cue::Escalate) {
        return Intent::Recommend;
    }
    // "只能上昇腾。要 LoRA 微调 GLM-4-9B，大概多少钱一个月？" asks a price: a recommendation on
    // that card.
    let question = p.cue(Cue::Feasibility)
        || (p.question || p.count_at_card) && !p.cue(Cue::Recommend) && !p.cue(Cue::Price);
    if !a.gpus.is_empty() && question {
        Intent::Feasibility
    } else {
        Intent::Recommend
    }
}
