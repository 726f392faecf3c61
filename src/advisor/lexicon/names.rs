//! The names of the cues and slots the parser reads. Every one must be defined in
//! `intents/*.toml`: [`super::Lexicon::build`] reports a missing one, so deleting a
//! pattern the parser relies on fails `gpu-advisor check` and start-up instead of
//! silently never matching. Names only: no patterns and no parsing here.

macro_rules! names {
    ($(#[$doc:meta])* $ty:ident { $($variant:ident = $id:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $ty {
            $($variant,)*
        }

        impl $ty {
            /// Every name, in declaration order (`ALL[n as usize] == n`).
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];

            /// The name as `intents/*.toml` spells it.
            pub fn id(self) -> &'static str {
                match self {
                    $($ty::$variant => $id,)*
                }
            }
        }
    };
}

names! {
    /// What kind of answer a question asks for (`[[cue]]` entries).
    Cue {
        Help = "help",
        Feasibility = "feasibility",
        Compare = "compare",
        Escalate = "escalate",
        Price = "price",
        Budget = "budget",
        Recommend = "recommend",
        CountAsk = "count.ask",
        CountAskMachines = "count.ask.machines",
        UsageQuestion = "usage_question",
        Overkill = "overkill",
        RecommendAsk = "recommend.ask",
        BillingMode = "billing_mode",
        Replace = "replace",
        Instead = "instead",
        CheapestAsk = "cheapest.ask",
        CardReferred = "card.referred",
        CardYours = "card.yours",
        Settle = "settle",
        CpuServer = "cpu_server",
        MachineDeclined = "machine.declined",
        Followup = "followup",
        Annual = "annual",
        Machine = "machine",
        Hourly = "hourly",
        Slice = "slice",
        Domestic = "domestic",
        Offtopic = "offtopic",
        Diagnostic = "diagnostic",
        Explain = "explain",
        ExplainFormula = "explain.formula",
        RefundAsk = "refund.ask",
        Why = "why",
        WhyLater = "why.later",
        WhyEnd = "why.end",
        WhyAnswer = "why.answer",
        WorthAsk = "worth.ask",
        MoveAsk = "move.ask",
        BeliefConfirm = "belief.confirm",
        FeatureAsk = "feature.ask",
        StorageAsk = "storage.ask",
        StorageFit = "storage.fit",
        ReplyEn = "reply.en",
        ReplyZh = "reply.zh",
    }
}

names! {
    /// Numbers and words a question states (`[[slot]]` entries).
    Slot {
        TaskQlora = "task.qlora",
        TaskLora = "task.lora",
        TaskFull = "task.full",
        TaskPretrain = "task.pretrain",
        TaskTrain = "task.train",
        TaskInference = "task.inference",
        TaskTrained = "task.trained",
        TaskRun = "task.run",
        TaskImage = "task.image",
        PrecisionFp32 = "precision.fp32",
        PrecisionNative = "precision.native",
        PrecisionFp16 = "precision.fp16",
        PrecisionBf16 = "precision.bf16",
        PrecisionFp8 = "precision.fp8",
        PrecisionInt8 = "precision.int8",
        PrecisionInt4 = "precision.int4",
        FormatGguf = "format.gguf",
        FormatAwq = "format.awq",
        Kv8bit = "kv.8bit",
        Optimizer8bit = "optimizer.8bit",
        OptimizerOffload = "optimizer.offload",
        Size = "size",
        SizeCount = "size.count",
        SizeActive = "size.active",
        Concurrency = "concurrency",
        Context = "context",
        ContextTarget = "context.target",
        AsideOther = "aside.other",
        AsideFailed = "aside.failed",
        AsideLead = "aside.lead",
        AsideOwned = "aside.owned",
        AsideRent = "aside.rent",
        AsideEnd = "aside.end",
        AsideVerify = "aside.verify",
        AskPolicy = "ask.policy",
        PrecisionLead = "precision.lead",
        ContextOutput = "context.output",
        ContextRequestSize = "context.request_size",
        RateAfter = "rate.after",
        ClassConsumer = "class.consumer",
        ClassHopper = "class.hopper",
        ClassDatacenterOnly = "class.datacenter_only",
        ClassSlice = "class.slice",
        ClassWholeCard = "class.whole_card",
        AddonCpu = "addon.cpu",
        AddonRam = "addon.ram",
        AddonDisk = "addon.disk",
        AddonBandwidth = "addon.bandwidth",
        MicroBatch = "micro_batch",
        Epochs = "epochs",
        BudgetAmount = "budget.amount",
        MoneyQuotedBefore = "money.quoted.before",
        QuoteElsewhere = "quote.elsewhere",
        CostNotMoney = "cost.not_money",
        BudgetUsd = "budget.usd",
        BudgetEur = "budget.eur",
        Months = "months",
        MonthsHalf = "months.half",
        MonthsPriceAfter = "months.price_after",
        Weeks = "weeks",
        Days = "days",
        ConcurrencyPeak = "concurrency.peak",
        BudgetTotal = "budget.total",
        BudgetNotMonthly = "budget.not_monthly",
        MoneyQuoted = "money.quoted",
        MonthsQuarter = "months.quarter",
        MonthsOne = "months.one",
        Years = "years",
        PeriodYear = "period.year",
        PeriodQuarter = "period.quarter",
        PeriodMonth = "period.month",
        PeriodMonths = "period.months",
        PeriodDay = "period.day",
        PeriodWeek = "period.week",
        PeriodHour = "period.hour",
        TrainTokens = "train_tokens",
        TrainTokensBillion = "train_tokens.billion",
        TokensRate = "tokens.rate",
        TrainSamples = "train_samples",
        SampleTokens = "sample_tokens",
        CardCount = "card_count",
        CardCountPair = "card_count.pair",
        CardCountSingle = "card_count.single",
        CardCountSingleBefore = "card_count.single_before",
        CardCountSingleAfter = "card_count.single_after",
        CardCountBefore = "card_count.before",
        CardCountAfter = "card_count.after",
        CardCountFallback = "card_count.fallback",
        DomesticLifted = "domestic.lifted",
        NegationWord = "negation.word",
        CardWord = "card.word",
        QuestionBreak = "question.break",
        AmountAsk = "amount.ask",
        CardVariant = "card.variant",
        ServingMetric = "serving.metric",
        Negation = "negation",
        NegationAfter = "negation.after",
        RejectedAfter = "rejected.after",
        LlamaCppParallel = "serving.llamacpp_parallel",
        CardExceptBefore = "card.except.before",
        CardExceptAfter = "card.except.after",
        CardExceptRefusal = "card.except.refusal",
        CardPluralBefore = "card.plural.before",
        CardPluralAfter = "card.plural.after",
        CardTurnedTo = "card.turned_to",
        CardCountInMachines = "card_count.in_machines",
        CardCountInCards = "card_count.in_cards",
        AskDuration = "ask.duration",
        ModelDistill = "model.distill",
        ModelSwitch = "model.switch",
        EngineVllm = "serving.engine.vllm",
        EngineSglang = "serving.engine.sglang",
        EngineTrtLlm = "serving.engine.trt-llm",
        EngineTransformers = "serving.engine.transformers",
        EngineLlamaCpp = "serving.engine.llama.cpp",
        EngineOllama = "serving.engine.ollama",
        Gguf = "serving.gguf",
        InputTokens = "serving.input_tokens",
        OutputTokens = "serving.output_tokens",
        MaxModelLen = "serving.max_model_len",
        MemoryFraction = "serving.memory_fraction",
        Eager = "serving.eager",
        Offline = "serving.offline",
        DailyUsers = "serving.daily_users",
        PeakShare = "serving.peak_share",
        PeakFraction = "serving.peak_fraction",
        PeakTenths = "serving.peak_tenths",
        UserBase = "serving.user_base",
        Qps = "serving.qps",
        Qpm = "serving.qpm",
        DailyRequests = "serving.daily_requests",
        ActiveHours = "serving.active_hours",
        OfficeHours = "serving.office_hours",
        RequestSeconds = "serving.request_s",
        TtftTarget = "serving.ttft_target",
        TtftTargetMs = "serving.ttft_target_ms",
        SpeedTarget = "serving.speed_target",
        ServingConcurrency = "serving.concurrency",
        AsksMaxConcurrency = "serving.ask.max_concurrency",
        AsksMaxContext = "serving.ask.max_context",
        AsksThroughput = "serving.ask.throughput",
        AsksSpeed = "serving.ask.speed",
        RequestTokens = "serving.request_tokens",
        Single = "serving.single",
        OneAtATime = "serving.one_at_a_time",
        MaxNumSeqs = "serving.max_num_seqs",
        MaxNumBatchedTokens = "serving.max_num_batched_tokens",
        VllmVersion = "serving.vllm_version",
        VllmV0 = "serving.vllm_v0",
        RecipeAttentionEager = "recipe.attention.eager",
        RecipeAttentionSdpa = "recipe.attention.sdpa",
        RecipeAttentionFlash = "recipe.attention.flash",
        RecipeCheckpointingOff = "recipe.checkpointing.off",
        RecipeCheckpointingOn = "recipe.checkpointing.on",
        RecipeLogitsFull = "recipe.logits.full",
        RecipeLogitsLast = "recipe.logits.last",
        RecipeQuantGptq = "recipe.quant.gptq",
        RecipeQuantAwq = "recipe.quant.awq",
        RecipeQuantBnbNf4 = "recipe.quant.bnb_nf4",
        RecipeQuantBnbInt8 = "recipe.quant.bnb_int8",
        RecipeQuantTorchao = "recipe.quant.torchao",
        RecipeQuantGguf = "recipe.quant.gguf",
        RecipeLoraRank = "recipe.lora_rank",
        RecipeLoraTargetsAll = "recipe.lora_targets.all",
        RecipeLoraTargetsQueryValue = "recipe.lora_targets.query_value",
        RecipeLoraTargetsAttention = "recipe.lora_targets.attention",
        RecipeFrameworkTransformers = "recipe.framework.transformers",
        RecipeFrameworkPeft = "recipe.framework.peft",
        RecipeFrameworkLlamaFactory = "recipe.framework.llama_factory",
        RecipeFrameworkMsSwift = "recipe.framework.ms_swift",
        RecipeFrameworkTorchtune = "recipe.framework.torchtune",
        RecipeFrameworkLitgpt = "recipe.framework.litgpt",
        RecipeFrameworkUnsloth = "recipe.framework.unsloth",
        RecipeFrameworkDeepspeed = "recipe.framework.deepspeed",
        RecipeZeroStage = "recipe.zero_stage",
        RecipeFrameworkAutoawq = "recipe.framework.autoawq",
        ChangeBudgetMore = "change.budget.more",
        ChangeBudgetLess = "change.budget.less",
        ChangeConcurrencyMore = "change.concurrency.more",
        ChangeConcurrencyLess = "change.concurrency.less",
        ChangeBare = "change.bare",
        ChangeReplaced = "change.replaced",
        ChangeScaleUp = "change.scale.up",
        ChangeScaleDown = "change.scale.down",
        ChangeTargetBudget = "change.target.budget",
        ChangeTargetConcurrency = "change.target.concurrency",
        ChangeTargetContext = "change.target.context",
        ChangeTargetData = "change.target.data",
        QuantityRange = "quantity.range",
        Quantity = "quantity",
        QuantitySpeed = "quantity.speed",
        QuantityLatencyMs = "quantity.latency_ms",
        QuantityLatency = "quantity.latency",
        QuantityTokens = "quantity.tokens",
        QuantityDailyUsers = "quantity.daily_users",
        QuantityQps = "quantity.qps",
        QuantityConcurrency = "quantity.concurrency",
        QuantityMachines = "quantity.machines",
        QuantityCards = "quantity.cards",
        QuantityMemory = "quantity.memory",
        QuantityParams = "quantity.params",
        QuantityMonths = "quantity.months",
        QuantityYears = "quantity.years",
        QuantityBatch = "quantity.batch",
        QuantityMoney = "quantity.money",
    }
}

/// A cue or a slot: anything [`super::Lexicon`] can look up without hashing a string.
pub trait Name: Copy {
    /// The name as `intents/*.toml` spells it.
    fn name(self) -> &'static str;
    /// Its place in [`super::Lexicon`]'s table of required entries.
    fn slot_index(self) -> usize;
}

impl Name for Cue {
    fn name(self) -> &'static str {
        self.id()
    }
    fn slot_index(self) -> usize {
        self as usize
    }
}

impl Name for Slot {
    fn name(self) -> &'static str {
        self.id()
    }
    fn slot_index(self) -> usize {
        Cue::ALL.len() + self as usize
    }
}

/// Every required name, cues first, in [`Name::slot_index`] order.
pub fn required() -> impl Iterator<Item = &'static str> {
    Cue::ALL
        .iter()
        .map(|c| c.id())
        .chain(Slot::ALL.iter().map(|s| s.id()))
}
