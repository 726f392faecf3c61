//! Workloads: what the user asked for (`Asked`, every field optional, so a follow-up can
//! override a part of the previous turn) and what the estimator runs (`Workload`, with
//! the documented defaults filled in and the model's architecture resolved). It neither
//! parses text nor estimates memory.

use super::catalog::{native_expert_bits, Catalog, KvForm, Model, ModelKind};
use serde::{Deserialize, Serialize};

pub mod serving;
pub use serving::{Engine, ServingAsk};
mod recipe;
pub use recipe::{Attention, Framework, Logits, LoraTargets, QuantLib, Recipe};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    Inference,
    Lora,
    Qlora,
    Full,
    Pretrain,
}

impl Task {
    pub fn is_training(self) -> bool {
        !matches!(self, Task::Inference)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
}

impl Precision {
    pub fn id(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp32 => "FP32",
            Precision::Bf16 => "BF16",
            Precision::Fp16 => "FP16",
            Precision::Fp8 => "FP8",
            Precision::Int8 => "INT8",
            Precision::Int4 => "INT4",
        }
    }
    pub fn from_id(s: &str) -> Option<Precision> {
        Some(match s {
            "fp32" => Precision::Fp32,
            "bf16" => Precision::Bf16,
            "fp16" => Precision::Fp16,
            "fp8" => Precision::Fp8,
            "int8" => Precision::Int8,
            "int4" => Precision::Int4,
            _ => return None,
        })
    }
    /// The step-down ladder of DOMAIN.md §6: FP32 → 16-bit → 8-bit → INT4.
    pub fn level(self) -> u8 {
        match self {
            Precision::Fp32 => 0,
            Precision::Bf16 | Precision::Fp16 => 1,
            Precision::Fp8 | Precision::Int8 => 2,
            Precision::Int4 => 3,
        }
    }
    /// How many precisions there are, for tables indexed by [`Precision::index`].
    pub const COUNT: usize = 6;
    /// A dense index in `0..COUNT`.
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn is_quantized(self) -> bool {
        matches!(self, Precision::Int8 | Precision::Int4)
    }
}

/// What a question (and the turns before it) stated. `None` means "not said".
///
/// Stored with every conversation (memory store and Redis), so what was not said is left
/// out of the JSON and read back as its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Asked {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_b: Option<f64>,
    /// The parameters a MoE of that size uses per token ("21B-A3B", "激活 3B").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_b: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    /// The budget is a total for a rental whose length was not said yet ("60k RMB total").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub budget_total: bool,
    /// The budget is a total spread over these months ("90k RMB total for a 6-month
    /// pilot"): months said later spread it again ("extended to 9 months, same total").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_months: Option<f64>,
    /// A domestic requirement lifted ("如果不限国产呢"): any card again.
    /// Read from this turn only: never stored.
    #[serde(skip)]
    pub domestic_lifted: bool,
    /// The task was read only from a plain "跑"/"run", which keeps a task stated before.
    /// Read from this turn only: never stored.
    #[serde(skip)]
    pub task_run_only: bool,
    /// The task was read only from a plain "训练"/"train", which keeps a training method
    /// stated before ("LoRA" then "游戏卡做训练靠谱吗"). Read from this turn only: never
    /// stored.
    #[serde(skip)]
    pub task_train_only: bool,
    /// A quote asked for the conversation's workload ("就按这个配，月付多少", "book 8x 4090
    /// for 2 months"): the price of the configuration that runs it. Read from this turn
    /// only: never stored.
    #[serde(skip)]
    pub quote: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub image: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub awq: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kv_8bit: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optimizer_8bit: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offload: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_tokens: Option<f64>,
    /// Passes over the data ("3 个 epoch"): the tokens trained on are the data's times
    /// this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epochs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_cny: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub months: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub annual: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u32>,
    /// Every card said with its own count ("2 张 A100 40G 和 4 张 3090"): the configurations
    /// a comparison prices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counted: Vec<(String, u32)>,
    /// The card named in the plural with no count ("on H100s", "多张 4090"): as many of
    /// it as the job needs, not one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cards_plural: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
    /// A slice of the card asked about ("A16 切片", "an A16 slice"): its memory is the
    /// slice's, and a follow-up about "it" keeps it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slice: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub domestic: bool,
    /// Domestic cards declined ("不要国产卡"): clears an earlier turn's wish.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_domestic: bool,
    /// Cards declined ("不要 H100"): never recommended, and no longer the card asked about.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declined: Vec<String>,
    /// Slices declined ("别推荐切片，我要独占整卡", "a dedicated GPU"): whole cards only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_cards: bool,
    /// A change relative to the previous turn's budget, CNY a month ("预算再加两千": +2000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_change: Option<f64>,
    /// A change relative to the previous turn's concurrency ("并发再加 10 个": +10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_change: Option<i64>,
    /// A slot doubled or halved ("double the data": the factor and the slot named, if
    /// one is): see [`Asked::over`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled: Option<(f64, Option<ScaleTarget>)>,
    /// A number with only a change verb ("降到 3000 呢"): see [`Asked::over`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_to: Option<f64>,
    /// The same number read as a token count (`k` = 1024), for a context it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_to_tokens: Option<f64>,
    /// The slot a bare change names ("预算打错了，是两万": the budget), if it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_slot: Option<ScaleTarget>,
    /// The value a correction says it replaces ("8k not 80k"), read plain and as tokens.
    #[serde(skip_serializing_if = "is_none_pair")]
    pub replaced: [Option<f64>; 2],
    /// Engine, request size, load and latency targets (DOMAIN.md §8).
    #[serde(skip_serializing_if = "ServingAsk::is_default")]
    pub serving: ServingAsk,
    /// How the job is run, as far as stated (attention, checkpointing, logits, libraries).
    #[serde(skip_serializing_if = "Recipe::is_default")]
    pub recipe: Recipe,
}

impl Asked {
    pub fn has_workload(&self) -> bool {
        self.model.is_some() || self.size_b.is_some()
    }

    /// Whether the question states a setting beyond its task and its cards: a precision,
    /// a load, a context, data, money, a period, a requirement, a count, a change.
    pub fn states_a_setting(&self) -> bool {
        self.states_a_setting_but_count() || self.gpu_count.is_some()
    }

    /// [`Asked::states_a_setting`] without the card count.
    pub fn states_a_setting_but_count(&self) -> bool {
        self.states_a_load()
            || self.precision.is_some()
            || self.budget_cny.is_some()
            || self.months.is_some()
            || self.annual
            || self.domestic
            || self.kv_8bit
            || self.optimizer_8bit
            || self.offload
            || self.no_domestic
            || self.domestic_lifted
            || !self.declined.is_empty()
            || self.budget_change.is_some()
            || self.changed_to.is_some()
    }

    /// Whether the question states the size of the load: users, context, batch, data, a
    /// scaling of the load, or the serving settings.
    pub fn states_a_load(&self) -> bool {
        self.concurrency.is_some()
            || self.context.is_some()
            || self.micro_batch.is_some()
            || self.train_tokens.is_some()
            || self.concurrency_change.is_some()
            || self.scaled.is_some()
            || self.serving.stated()
    }

    /// A new question in the same conversation keeps the constraints that stand until the
    /// customer replaces them: the budget, the rental period, domestic hardware, the cards
    /// declined and the engine ("预算一个月 5000" then "要跑 Qwen2.5-14B 推理，20 并发").
    /// The card and its count belong to the question they were asked in.
    pub fn keeping_constraints_of(&self, prev: &Asked) -> Asked {
        let mut m = self.clone();
        if m.budget_cny.is_none() && m.budget_change.is_none() {
            m.budget_cny = prev.budget_cny;
            m.budget_total = prev.budget_total;
            m.total_months = prev.total_months;
            self.spread_total(prev, &mut m);
        }
        if m.months.is_none() {
            m.months = prev.months;
        }
        m.annual |= prev.annual && self.months.is_none();
        m.domestic |= prev.domestic && !self.no_domestic && !self.domestic_lifted;
        m.whole_cards |= prev.whole_cards;
        for g in &prev.declined {
            if !m.declined.contains(g) && !self.gpus.contains(g) {
                m.declined.push(g.clone());
            }
        }
        if m.serving.engine.is_none() {
            m.serving.engine = prev.serving.engine;
        }
        // "客服机器人，日活 2 万" then "model is Qwen2.5-14B": a load said before any model
        // is the load of the model named next.
        if !prev.has_workload() {
            let (s, p) = (&mut m.serving, &prev.serving);
            if m.concurrency.is_none() && s.daily_users.is_none() && s.qps.is_none() {
                m.concurrency = prev.concurrency;
                s.daily_users = p.daily_users;
                s.peak_share = s.peak_share.or(p.peak_share);
                s.qps = p.qps;
                s.request_s = s.request_s.or(p.request_s);
            }
            s.input_tokens = s.input_tokens.or(p.input_tokens);
            s.output_tokens = s.output_tokens.or(p.output_tokens);
            s.ttft_target_s = s.ttft_target_s.or(p.ttft_target_s);
            s.speed_target = s.speed_target.or(p.speed_target);
            if m.context.is_none() {
                m.context = prev.context;
            }
        }
        m
    }

    /// What a conversation keeps of this turn: without what is read from a turn only.
    pub fn stored(mut self) -> Asked {
        self.task_run_only = false;
        self.task_train_only = false;
        self.quote = false;
        self.domestic_lifted = false;
        self.serving.engine_by_quant = false;
        self
    }

    /// "60k RMB total" then "it has to last 6 months": the total spread over those months.
    /// "extended to 9 months, same total" after a total for 6: spread again.
    fn spread_total(&self, prev: &Asked, m: &mut Asked) {
        let Some(n) = self.months.filter(|n| *n > 1.0) else {
            return;
        };
        if prev.budget_total {
            m.budget_cny = prev.budget_cny.map(|b| b / n);
            m.budget_total = false;
            m.total_months = Some(n);
        } else if let Some(before) = prev.total_months {
            m.budget_cny = prev.budget_cny.map(|b| b * before / n);
            m.total_months = Some(n);
        }
    }

    /// The slot a bare number or a "double it" changes when nothing else says which:
    /// the budget this turn stated, else its concurrency, else its context.
    fn stated_number_slot(&self) -> Option<ScaleTarget> {
        if self.budget_cny.is_some() {
            Some(ScaleTarget::Budget)
        } else if self.concurrency.is_some() {
            Some(ScaleTarget::Concurrency)
        } else if self.context.is_some() {
            Some(ScaleTarget::Context)
        } else {
            None
        }
    }

    /// This turn's statements laid over the previous turn's (a follow-up).
    pub fn over(&self, prev: &Asked) -> Asked {
        let mut m = prev.clone();
        macro_rules! take {
            ($($f:ident),*) => { $( if self.$f.is_some() { m.$f = self.$f.clone(); } )* };
        }
        take!(
            model,
            size_b,
            precision,
            concurrency,
            context,
            micro_batch,
            train_tokens,
            epochs,
            budget_cny,
            months,
            gpu,
            gpu_count,
            offer
        );
        // "我手上只有一张 4090，能跑吗" after a fine-tuning question runs that fine-tuning.
        let keeps_method = self.task_train_only && prev.task.is_some_and(|t| t.is_training());
        if self.task.is_some() && !(self.task_run_only && prev.task.is_some()) && !keeps_method {
            m.task = self.task;
        }
        if self.model.is_some() && self.size_b.is_none() {
            m.size_b = None;
        }
        if self.model.is_some() || self.size_b.is_some() {
            m.active_b = self.active_b;
        }
        if self.size_b.is_some() && self.model.is_none() {
            m.model = None;
        }
        if self.task.is_some() && self.context.is_none() && prev.task != m.task {
            // The default sequence differs between serving and training.
            m.context = prev.context.filter(|_| {
                prev.task.is_some_and(|t| t.is_training())
                    == self.task.is_some_and(|t| t.is_training())
            });
        }
        if self.precision.is_some() {
            m.awq = self.awq;
        }
        if !self.gpus.is_empty() {
            m.gpus = self.gpus.clone();
            m.counted = self.counted.clone();
            m.slice = self.slice;
            // "8 张 H100 …" then "那换成 H20 呢": the card changes, the count stays.
        }
        m.image |= self.image;
        m.cards_plural = if self.gpus.is_empty() {
            prev.cards_plural && self.gpu_count.is_none()
        } else {
            self.cards_plural
        };
        m.kv_8bit |= self.kv_8bit;
        m.optimizer_8bit |= self.optimizer_8bit;
        m.offload |= self.offload;
        m.annual |= self.annual;
        m.whole_cards |= self.whole_cards;
        m.domestic = (m.domestic && !self.no_domestic && !self.domestic_lifted) || self.domestic;
        // A card named under a domestic requirement goes when the requirement is lifted.
        if self.domestic_lifted && prev.domestic && self.gpus.is_empty() {
            m.gpus.clear();
            m.gpu = None;
            m.gpu_count = None;
        }
        m.no_domestic = !m.domestic && (self.no_domestic || prev.no_domestic);
        // A card declined now is no longer the card asked about; one named again is no
        // longer declined.
        m.declined.retain(|g| !self.gpus.contains(g));
        for g in &self.declined {
            if !m.declined.contains(g) {
                m.declined.push(g.clone());
            }
        }
        if !self.declined.is_empty() && self.gpus.is_empty() {
            m.gpus.retain(|g| !self.declined.contains(g));
            if m.gpu.as_ref().is_some_and(|g| self.declined.contains(g)) {
                m.gpu = m.gpus.first().cloned();
                m.gpu_count = None;
            }
        }
        if self.budget_cny.is_none() {
            self.spread_total(prev, &mut m);
        } else {
            m.total_months = self.total_months;
        }
        // Relative changes apply to what the previous turn had.
        if self.budget_cny.is_none() {
            if let Some(d) = self.budget_change {
                m.budget_cny = prev.budget_cny.map(|b| b + d).filter(|b| *b > 0.0);
                m.total_months = None;
            }
        }
        if self.concurrency.is_none() {
            if let Some(d) = self.concurrency_change {
                let base = i64::from(prev.concurrency.unwrap_or(1));
                m.concurrency = u32::try_from((base + d).max(1)).ok();
            }
        }
        // "降到 3000 呢": the previous turn's budget, else its concurrency, else its
        // context, whichever it stated.
        // "那 4090 呢" names a card, not a number.
        if let Some(v) = self.changed_to.filter(|_| self.gpus.is_empty()) {
            // "8k not 80k": the slot that holds the value replaced, when one does.
            let [plain, tokens] = self.replaced;
            let held =
                |x: Option<f64>, y: Option<f64>| x.zip(y).is_some_and(|(x, y)| (x - y).abs() < 0.5);
            let context =
                |c: Option<u32>| held(c.map(f64::from), tokens) || held(c.map(f64::from), plain);
            let replaced = (plain.is_some() || tokens.is_some()) && !held(prev.budget_cny, plain);
            // "预算打错了，是两万": the slot the change names, else the one holding the value
            // it replaces, else the budget, concurrency or context the last turn stated.
            let slot = self.changed_slot.or_else(|| {
                if replaced && context(prev.context) {
                    Some(ScaleTarget::Context)
                } else if replaced && held(prev.concurrency.map(f64::from), plain) {
                    Some(ScaleTarget::Concurrency)
                } else {
                    prev.stated_number_slot()
                }
            });
            match slot {
                Some(ScaleTarget::Budget) => {
                    m.budget_cny = Some(v);
                    if self.changed_slot.is_some() {
                        m.total_months = None;
                    }
                }
                Some(ScaleTarget::Concurrency) => {
                    m.concurrency = Some(v.round().clamp(1.0, 1e6) as u32);
                }
                Some(ScaleTarget::Context) => {
                    let v = self.changed_to_tokens.unwrap_or(v);
                    m.context = Some(v.round().clamp(1.0, 1e8) as u32);
                }
                Some(ScaleTarget::Data) | None => {}
            }
        }
        // "double the data", "并发翻倍": the slot named, else the previous turn's data
        // size when it trained on one, else its budget, concurrency or context.
        let mut load_scale = None;
        if let Some((k, target)) = self.scaled {
            let target = target.or_else(|| {
                if prev.train_tokens.is_some() && prev.task.is_some_and(Task::is_training) {
                    Some(ScaleTarget::Data)
                } else {
                    prev.stated_number_slot()
                }
            });
            match target {
                Some(ScaleTarget::Data) if self.train_tokens.is_none() => {
                    m.train_tokens = prev.train_tokens.map(|t| t * k);
                }
                Some(ScaleTarget::Budget) if self.budget_cny.is_none() => {
                    m.budget_cny = prev.budget_cny.map(|b| b * k);
                }
                // "日活翻倍呢": a load said as daily users or QPS scales as it was said.
                Some(ScaleTarget::Concurrency)
                    if self.concurrency.is_none()
                        && prev.concurrency.is_none()
                        && (prev.serving.daily_users.is_some() || prev.serving.qps.is_some()) =>
                {
                    load_scale = Some(k);
                }
                Some(ScaleTarget::Concurrency) if self.concurrency.is_none() => {
                    m.concurrency = Some(
                        (f64::from(prev.concurrency.unwrap_or(1)) * k)
                            .round()
                            .clamp(1.0, 1e6) as u32,
                    );
                }
                Some(ScaleTarget::Context) if self.context.is_none() => {
                    m.context = prev
                        .context
                        .map(|c| (f64::from(c) * k).round().clamp(1.0, 1e8) as u32);
                }
                _ => {}
            }
        }
        m.scaled = None;
        m.budget_change = None;
        m.concurrency_change = None;
        m.changed_to = None;
        m.changed_to_tokens = None;
        m.changed_slot = None;
        m.replaced = [None, None];
        // "batch 改成 8" alone, of a service, is its batch of concurrent requests, as in a
        // question of its own that says it serves (parse.rs); of a training job, its
        // micro-batch.
        if self.micro_batch.is_some()
            && self.concurrency.is_none()
            && !self.has_workload()
            && !m.task.is_some_and(Task::is_training)
        {
            m.concurrency = self.micro_batch;
            m.micro_batch = prev.micro_batch;
        }
        m.serving = self.serving.over(&prev.serving);
        // One load replaces another however it is said: "要是按日活 2000 算呢" after "50 个人
        // 同时在线" is the daily users' load, "并发 30 呢" after a QPS the concurrency.
        let said_load = self.serving.daily_users.is_some() || self.serving.qps.is_some();
        if said_load && self.concurrency.is_none() {
            m.concurrency = None;
        } else if self.concurrency.is_some() && !said_load {
            m.serving.daily_users = None;
            m.serving.qps = None;
            m.serving.daily_requests = None;
            m.serving.active_hours = None;
        }
        if let Some(k) = load_scale {
            if self.serving.daily_users.is_none() && self.serving.qps.is_none() {
                m.serving.daily_users = m
                    .serving
                    .daily_users
                    .map(|d| (f64::from(d) * k).round().clamp(1.0, 1e9) as u32);
                m.serving.qps = m.serving.qps.map(|q| q * k);
                m.serving.daily_requests = m.serving.daily_requests.map(|n| n * k);
            }
        }
        m.recipe = self.recipe.over(&prev.recipe);
        m
    }
}

/// The slot a "double"/"halve" names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleTarget {
    Budget,
    Concurrency,
    Context,
    Data,
}

/// The size a model's name states ("Qwen2.5-7B" → 7, "DeepSeek-R1-Distill-Qwen-1.5B" →
/// 1.5), with the name's parts before it; `None` when no part of the name is a size
/// ("Mixtral-8x7B", "GLM-4.5").
fn name_size(name: &str) -> Option<(f64, Vec<String>, usize)> {
    let parts: Vec<String> = name.split(['-', '_', ' ']).map(str::to_lowercase).collect();
    parts.iter().enumerate().find_map(|(i, p)| {
        let n = p.strip_suffix('b')?;
        let v: f64 = n.parse().ok()?;
        (v > 0.0).then(|| (v, parts[..i].to_vec(), parts.len()))
    })
}

/// "那 14B 呢" after a named model: the catalog's model of the same family whose name
/// says that size and reads the same before it ("Qwen2.5-7B" → "Qwen2.5-14B",
/// "Qwen3-8B" → "Qwen3-30B-A3B", never "Qwen3-Coder-30B-A3B"); the one with the fewest
/// further name parts when several do. Failing that, the one model of that size whose
/// name differs only in the word before the size ("DeepSeek-R1-Distill-Llama-8B" →
/// "DeepSeek-R1-Distill-Qwen-14B", the only distilled 14B). `None` when the catalog has no
/// such model (a bare size is then a generic model).
pub fn sized_sibling(cat: &Catalog, model: &str, size_b: f64) -> Option<String> {
    let m = cat.model(model)?;
    let (_, prefix, _) = name_size(&m.name)?;
    let sized: Vec<_> = cat
        .models
        .iter()
        .filter(|o| o.family == m.family)
        .filter_map(|o| {
            let (v, pre, parts) = name_size(&o.name)?;
            ((v - size_b).abs() < 1e-6).then_some((pre, parts, o))
        })
        .collect();
    let exact = sized
        .iter()
        .filter(|(pre, _, _)| *pre == prefix)
        .min_by_key(|(_, parts, _)| *parts);
    if let Some((_, _, o)) = exact {
        return Some(o.id.clone());
    }
    let stem = &prefix[..prefix.len().saturating_sub(1)];
    let near: Vec<_> = sized
        .iter()
        .filter(|(pre, _, _)| {
            pre.len() == prefix.len() && prefix.len() > 1 && pre.starts_with(stem)
        })
        .collect();
    match near.as_slice() {
        [(_, _, o)] => Some(o.id.clone()),
        _ => None,
    }
}

/// The architecture the estimator computes with.
#[derive(Debug, Clone, PartialEq)]
pub struct Arch {
    pub params_b: f64,
    pub active_params_b: f64,
    pub layers: f64,
    pub hidden: f64,
    pub intermediate: f64,
    pub heads: f64,
    pub kv_heads: f64,
    pub head_dim: f64,
    pub vocab: f64,
    pub tied: bool,
    pub kv_form: KvForm,
    pub kv_latent_dim: f64,
    pub kv_copies: f64,
    pub diffusion: bool,
    pub diffusion_activation_gb: f64,
    pub layout: Layout,
}

/// What the newer architectures add to a plain decoder (all zero for one): attention
/// layers capped at a window, linear-attention layers, the native expert format, and a
/// diffusion pipeline's parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    pub sliding_layers: f64,
    pub sliding_window: f64,
    pub linear_layers: f64,
    /// Recurrent state of all linear-attention layers for one sequence, bytes.
    pub linear_state_bytes: f64,
    /// Cross-attention layers and the image K/V they hold per sequence, bytes.
    pub cross_layers: f64,
    pub cross_state_bytes: f64,
    pub expert_params_b: f64,
    /// Bits per routed-expert weight when the experts ship in a native 4-bit format
    /// (MXFP4, INT4 groups of 32) and the rest in BF16; 0 otherwise.
    pub native_expert_bits: f64,
    pub text_encoder_b: f64,
    pub vae_b: f64,
    pub vision_params_b: f64,
    /// The MLP's gate and up projections are one fused linear whose 2 × intermediate
    /// output is chunked (ChatGLM3/GLM-4 `modeling_chatglm.py` `dense_h_to_4h` and
    /// `swiglu`; Phi-3/Phi-4 `Phi3MLP.gate_up_proj`): that output lives while the
    /// activation and the product are made.
    pub fused_gate_up: bool,
}

impl Arch {
    pub fn from_model(m: &Model) -> Arch {
        Arch {
            params_b: m.params_b,
            active_params_b: m.active_params_b,
            layers: m.layers as f64,
            hidden: m.hidden as f64,
            intermediate: m.intermediate as f64,
            heads: m.heads as f64,
            kv_heads: m.kv_heads as f64,
            head_dim: m.head_dim as f64,
            vocab: m.vocab as f64,
            tied: m.tied_embeddings,
            kv_form: m.kv_form,
            kv_latent_dim: m.kv_latent_dim as f64,
            kv_copies: m.kv_copies.max(1) as f64,
            diffusion: m.kind == ModelKind::Diffusion,
            diffusion_activation_gb: m.diffusion_activation_gb,
            layout: Layout {
                sliding_layers: m.sliding_layers as f64,
                sliding_window: m.sliding_window as f64,
                linear_layers: m.linear_layers as f64,
                linear_state_bytes: m.linear_state_mb * 1e6,
                cross_layers: m.cross_layers as f64,
                cross_state_bytes: m.cross_state_mb * 1e6,
                expert_params_b: m.expert_params_b,
                native_expert_bits: native_expert_bits(&m.native_precision).unwrap_or(0.0),
                text_encoder_b: m.text_encoder_b,
                vae_b: m.vae_b,
                vision_params_b: m.vision_params_b,
                fused_gate_up: matches!(m.family.as_str(), "chatglm" | "glm4" | "phi"),
            },
        }
    }

    /// A generic Llama-shaped decoder for a bare size (DOMAIN.md §6): GQA with 8 KV
    /// heads of 128, vocab 32000, layers × hidden by size class; other sizes take the
    /// nearest class's layers and hidden = √(params ÷ (12 × layers)); intermediate 8/3 ×
    /// hidden.
    pub fn generic(params_b: f64) -> Arch {
        const ROWS: &[(f64, f64, f64)] = &[
            // (class size in B, layers, hidden)
            (0.5, 16.0, 1536.0),
            (2.0, 24.0, 2048.0),
            (7.0, 32.0, 4096.0),
            (13.5, 40.0, 5120.0),
            (32.0, 60.0, 6656.0),
            (70.0, 80.0, 8192.0),
            (140.0, 96.0, 12288.0),
            (405.0, 126.0, 16384.0),
        ];
        let in_class = |lo: f64, hi: f64| params_b >= lo && params_b <= hi;
        let class = if params_b < 1.0 {
            Some(ROWS[0])
        } else if in_class(1.0, 3.0) {
            Some(ROWS[1])
        } else if in_class(6.5, 8.0) {
            Some(ROWS[2])
        } else if in_class(13.0, 14.9) {
            Some(ROWS[3])
        } else if in_class(30.0, 34.9) {
            Some(ROWS[4])
        } else if in_class(65.0, 72.9) {
            Some(ROWS[5])
        } else if in_class(100.0, 180.0) {
            Some(ROWS[6])
        } else if params_b >= 400.0 {
            Some(ROWS[7])
        } else {
            None
        };
        let (layers, hidden) = match class {
            Some((_, l, h)) => (l, h),
            None => {
                let nearest = ROWS
                    .iter()
                    .min_by(|a, b| {
                        let da = (a.0.ln() - params_b.ln()).abs();
                        let db = (b.0.ln() - params_b.ln()).abs();
                        da.total_cmp(&db)
                    })
                    .expect("rows");
                let l = nearest.1;
                (l, (params_b * 1e9 / (12.0 * l)).sqrt().round())
            }
        };
        Arch {
            params_b,
            active_params_b: params_b,
            layers,
            hidden,
            intermediate: (hidden * 8.0 / 3.0).round(),
            heads: (hidden / 128.0).round().max(1.0),
            kv_heads: 8.0,
            head_dim: 128.0,
            vocab: 32000.0,
            tied: false,
            kv_form: KvForm::Gqa,
            kv_latent_dim: 0.0,
            kv_copies: 1.0,
            diffusion: false,
            diffusion_activation_gb: 0.0,
            layout: Layout::default(),
        }
    }

    /// Parameters of the embedding and output matrices (kept 16-bit when quantized).
    pub fn embedding_params(&self) -> f64 {
        if self.diffusion {
            return 0.0;
        }
        let n = self.vocab * self.hidden * if self.tied { 1.0 } else { 2.0 };
        n.min(self.params_b * 1e9 * 0.5)
    }
}

/// The precision a model's native format reports: MXFP4 experts are 4-bit weights.
pub fn native_precision(id: &str) -> Option<Precision> {
    match id {
        "mxfp4" | "int4-experts" => Some(Precision::Int4),
        _ => Precision::from_id(id),
    }
}

/// The resolved workload, shaped like CONTRACT.md §2 `workload` plus what the estimator
/// needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub model: Option<String>,
    pub model_name: Option<String>,
    pub arch: Arch,
    pub task: Task,
    pub precision: Precision,
    pub awq: bool,
    pub kv_8bit: bool,
    pub optimizer_8bit: bool,
    pub offload: bool,
    pub concurrency: u32,
    pub context: u32,
    pub micro_batch: Option<u32>,
    /// Every token trained on: the data's times its passes.
    pub train_tokens: Option<f64>,
    /// The passes over the data, when more than one was said.
    pub epochs: Option<f64>,
    /// How the job is run: stated parts, the rest defaulted by its accessors.
    pub recipe: Recipe,
}

/// Defaults when a question leaves them out (CONTRACT.md §2).
pub const DEFAULT_INFERENCE_CONTEXT: u32 = 4096;
pub const DEFAULT_TRAINING_SEQUENCE: u32 = 2048;
pub const DEFAULT_MICRO_BATCH: u32 = 1;

impl Workload {
    /// Fills the defaults in. `None` when nothing names a model or a size.
    pub fn resolve(a: &Asked, cat: &Catalog) -> Option<Workload> {
        let model = a.model.as_deref().and_then(|id| cat.model(id));
        let arch = match (model, a.size_b) {
            (Some(m), _) => Arch::from_model(m),
            (None, Some(s)) => {
                let mut arch = Arch::generic(s);
                if let Some(x) = a.active_b {
                    arch.active_params_b = x.min(s);
                }
                arch
            }
            (None, None) => return None,
        };
        let task = match (a.task, a.precision) {
            // LoRA on a 4-bit base is QLoRA.
            (Some(Task::Lora), Some(Precision::Int4)) => Task::Qlora,
            (t, _) => t.unwrap_or(Task::Inference),
        };
        let task = if arch.diffusion && task.is_training() && a.task.is_none() {
            Task::Inference
        } else {
            task
        };
        let native = model
            .and_then(|m| native_precision(&m.native_precision))
            .unwrap_or(Precision::Bf16);
        let precision = match task {
            Task::Qlora => Precision::Int4,
            Task::Inference => a.precision.unwrap_or(native),
            // Training computes in 16-bit; an FP8 checkpoint is trained from BF16.
            // LoRA may keep its frozen base in INT8 (bitsandbytes 8-bit).
            Task::Lora if a.precision == Some(Precision::Int8) => Precision::Int8,
            _ => match a.precision {
                Some(p @ (Precision::Fp32 | Precision::Fp16)) => p,
                _ => Precision::Bf16,
            },
        };
        let training = task.is_training();
        let context = a.context.unwrap_or(if training {
            DEFAULT_TRAINING_SEQUENCE
        } else {
            DEFAULT_INFERENCE_CONTEXT
        });
        Some(Workload {
            model: model.map(|m| m.id.clone()),
            model_name: model.map(|m| m.name.clone()),
            arch,
            task,
            precision,
            awq: a.awq && precision == Precision::Int4,
            kv_8bit: a.kv_8bit,
            optimizer_8bit: a.optimizer_8bit,
            offload: a.offload,
            concurrency: if training {
                1
            } else {
                a.concurrency
                    .or_else(|| {
                        a.serving
                            .asked_load(context)
                            .map(|c| c.ceil().min(1e6) as u32)
                    })
                    .unwrap_or(1)
                    .max(1)
            },
            context: context.max(1),
            micro_batch: training.then(|| a.micro_batch.unwrap_or(DEFAULT_MICRO_BATCH).max(1)),
            train_tokens: if training {
                a.train_tokens.map(|t| t * a.epochs.unwrap_or(1.0))
            } else {
                None
            },
            epochs: a.epochs.filter(|e| training && *e != 1.0),
            recipe: a.recipe.clone(),
        })
    }
}

#[cfg(test)]
mod tests;

fn is_none_pair(p: &[Option<f64>; 2]) -> bool {
    p.iter().all(Option::is_none)
}
