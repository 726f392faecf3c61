//! The recipe: how a job is run, as far as the question states it (attention
//! implementation, activation checkpointing, logits, quantisation library, LoRA rank and
//! targets, framework, ZeRO stage). Every field is optional; what is not said is the
//! documented default (DOMAIN.md §6–§7), which [`Recipe`]'s accessors give.

use serde::{Deserialize, Serialize};

/// The attention kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attention {
    /// FlashAttention-2/3: no context² tensor.
    Flash,
    /// PyTorch `scaled_dot_product_attention` (flash or memory-efficient kernel): none either.
    Sdpa,
    /// The eager matmul–softmax–matmul: one layer's scores, context² per head, materialised.
    Eager,
}

/// Which positions the language-model head computes logits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Logits {
    /// The last token of each sequence (transformers ≥ 4.45 `logits_to_keep`, vLLM).
    Last,
    /// Every prompt token (transformers before 4.45 during `generate`).
    Full,
}

/// The library that quantised the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuantLib {
    Gptq,
    Awq,
    BnbNf4,
    BnbInt8,
    Torchao,
    Gguf,
}

impl QuantLib {
    pub fn is_bitsandbytes(self) -> bool {
        matches!(self, QuantLib::BnbNf4 | QuantLib::BnbInt8)
    }
}

/// Which linear layers LoRA adapts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoraTargets {
    /// Every linear layer of every block (q, k, v, o and the MLP).
    AllLinear,
    /// The attention projections q, k, v, o.
    Attention,
    /// Query and value only (the LoRA paper's and PEFT's Llama default).
    QueryValue,
}

/// The training or inference framework named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    Transformers,
    Peft,
    LlamaFactory,
    MsSwift,
    Torchtune,
    Litgpt,
    Unsloth,
    Deepspeed,
    /// AutoAWQ's own fused modules (`fuse_layers=True`).
    Autoawq,
}

impl Framework {
    pub fn label(self) -> &'static str {
        match self {
            Framework::Transformers => "HF transformers",
            Framework::Peft => "PEFT",
            Framework::LlamaFactory => "LLaMA-Factory",
            Framework::MsSwift => "ms-swift",
            Framework::Torchtune => "torchtune",
            Framework::Litgpt => "LitGPT",
            Framework::Unsloth => "Unsloth",
            Framework::Deepspeed => "DeepSpeed",
            Framework::Autoawq => "AutoAWQ",
        }
    }
}

/// How the job is run, as stated; `None` is "not said".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recipe {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention: Option<Attention>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpointing: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logits: Option<Logits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quant_lib: Option<QuantLib>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora_targets: Option<LoraTargets>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<Framework>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_stage: Option<u8>,
}

impl Recipe {
    pub fn is_default(&self) -> bool {
        *self == Recipe::default()
    }

    /// This turn's statements laid over the previous turn's.
    pub fn over(&self, prev: &Recipe) -> Recipe {
        Recipe {
            attention: self.attention.or(prev.attention),
            checkpointing: self.checkpointing.or(prev.checkpointing),
            logits: self.logits.or(prev.logits),
            quant_lib: self.quant_lib.or(prev.quant_lib),
            lora_rank: self.lora_rank.or(prev.lora_rank),
            lora_targets: self.lora_targets.or(prev.lora_targets),
            framework: self.framework.or(prev.framework),
            zero_stage: self.zero_stage.or(prev.zero_stage),
        }
    }

    /// The attention kernel: FlashAttention/SDPA unless eager is said (DOMAIN.md §7), or
    /// AutoAWQ is named: its fused attention (awq/modules/fused/attn.py,
    /// `QuantAttentionFused`) computes the prompt's scores with `torch.matmul` and
    /// `softmax(scores.float())`, the eager way.
    pub fn attention(&self) -> Attention {
        self.attention.unwrap_or(match self.framework {
            Some(Framework::Autoawq) => Attention::Eager,
            _ => Attention::Flash,
        })
    }

    /// Activation checkpointing in training: on unless said off (CONTRACT.md §2).
    pub fn checkpointing(&self) -> bool {
        self.checkpointing.unwrap_or(true)
    }

    /// Logits for the whole prompt when said, or for a transformers release of the tuple
    /// caches (below, ≤ 4.35: `generate` computed them for every prompt token until 4.45);
    /// else the last token only. Naming transformers alone does not say the release, and
    /// models whose remote code keeps the last position only (ChatGLM's
    /// `return_last_logit`) are measured at contexts where whole-prompt logits could not
    /// fit, so the default stays the last token.
    pub fn logits(&self) -> Logits {
        // AutoAWQ's fused models run under transformers' `generate` of its releases
        // (4.35–4.44), which computed every prompt token's logits.
        self.logits.unwrap_or(
            if self.tuple_cache() || self.framework == Some(Framework::Autoawq) {
                Logits::Full
            } else {
                Logits::Last
            },
        )
    }

    /// HF transformers with eager attention: the releases where eager was the default
    /// (≤ 4.35) kept `past_key_values` as tuples of tensors, so generate holds the
    /// previous step's cache while each layer concatenates the next one.
    pub fn tuple_cache(&self) -> bool {
        self.framework == Some(Framework::Transformers) && self.attention == Some(Attention::Eager)
    }

    /// Whether anything differs from the defaults the estimate would assume.
    pub fn stated(&self) -> bool {
        !self.is_default()
    }

    /// The recipe the estimate assumes for a job: what was said, and the defaults of
    /// what matters to its task (attention and logits for inference, checkpointing and
    /// the LoRA rank for training).
    pub fn assumed(&self, training: bool, lora: bool, lora_rank: u32) -> Recipe {
        Recipe {
            attention: Some(self.attention()),
            checkpointing: training.then(|| self.checkpointing()),
            logits: (!training).then(|| self.logits()),
            lora_rank: if lora {
                Some(self.lora_rank.unwrap_or(lora_rank))
            } else {
                None
            },
            lora_targets: if lora {
                Some(self.lora_targets.unwrap_or(LoraTargets::AllLinear))
            } else {
                None
            },
            ..self.clone()
        }
    }
}
