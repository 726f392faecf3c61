//! The architecture of a config.json, read field by field, and its parameters counted:
//! attention (GQA/MQA/MHA, gated, MLA), layer kinds (sliding/chunked, linear,
//! cross-attention), experts (routed, shared, which layers), embeddings, vision tower.

use serde_json::Value;

/// The architecture as read, before it is written out.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Arch {
    pub(super) layers: u64,
    pub(super) hidden: u64,
    pub(super) intermediate: u64,
    pub(super) heads: u64,
    pub(super) kv_heads: u64,
    pub(super) head_dim: u64,
    pub(super) vocab: u64,
    pub(super) tied: bool,
    pub(super) max_context: u64,
    pub(super) mla_latent: u64,
    pub(super) experts: u64,
    pub(super) experts_per_token: u64,
    pub(super) shared_experts: u64,
    pub(super) sliding_layers: u64,
    pub(super) sliding_window: u64,
    pub(super) linear_layers: u64,
    pub(super) linear_state_bytes: f64,
    pub(super) cross_layers: u64,
    pub(super) cross_state_bytes: f64,
    pub(super) native: &'static str,
    pub(super) total: f64,
    pub(super) active: f64,
    pub(super) experts_total: f64,
    pub(super) vision: f64,
    pub(super) active_width: u64,
}

fn u(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(|x| {
        x.as_u64()
            .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
    })
}

/// The first of `keys` the config carries.
fn first(v: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| u(v, k))
}

pub(super) fn read_arch(
    root: &Value,
    t: &Value,
    missing: &mut Vec<String>,
) -> Result<Arch, String> {
    let need =
        |k: &[&str]| first(t, k).ok_or_else(|| format!("config.json has no {}", k.join(" / ")));
    let layers = need(&["num_hidden_layers", "num_layers", "n_layer"])?;
    let hidden = need(&["hidden_size", "d_model", "n_embd"])?;
    let heads = need(&["num_attention_heads", "n_head"])?;
    let vocab = first(t, &["vocab_size", "padded_vocab_size"])
        .or_else(|| u(root, "vocab_size"))
        .ok_or("config.json has no vocab_size")?;
    let kv_heads = first(t, &["num_key_value_heads", "multi_query_group_num"]).unwrap_or(heads);
    let head_dim = u(t, "head_dim")
        .or_else(|| u(t, "kv_channels"))
        .unwrap_or(hidden / heads.max(1));
    let dense_inter = first(
        t,
        &[
            "intermediate_size_mlp",
            "dense_intermediate_size",
            "mlp_intermediate_size",
            "intermediate_size",
            "ffn_hidden_size",
        ],
    )
    .unwrap_or(hidden * 8 / 3);
    let tied = t
        .get("tie_word_embeddings")
        .or_else(|| root.get("tie_word_embeddings"))
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let max_context = first(
        t,
        &[
            "max_position_embeddings",
            "seq_length",
            "max_sequence_length",
        ],
    )
    .unwrap_or_else(|| {
        missing.push("max_context".into());
        0
    });

    // Attention weights per layer.
    let kv_lora = u(t, "kv_lora_rank").unwrap_or(0);
    let (attn, mla_latent) = if kv_lora > 0 {
        let rope = u(t, "qk_rope_head_dim").unwrap_or(64);
        let nope = u(t, "qk_nope_head_dim").unwrap_or(128);
        let v_head = u(t, "v_head_dim").unwrap_or(128);
        let q = match u(t, "q_lora_rank").filter(|r| *r > 0) {
            Some(r) => hidden * r + r * heads * (nope + rope),
            None => hidden * heads * (nope + rope),
        };
        let kv = hidden * (kv_lora + rope) + kv_lora * heads * (nope + v_head);
        (q + kv + heads * v_head * hidden, kv_lora + rope)
    } else {
        let q = hidden * heads * head_dim;
        // Gated attention (Qwen3-Next, Qwen3.5): q_proj also yields the output gate.
        let model_type = |v: &Value| {
            v.get("model_type")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_string()
        };
        let gated = t.get("attn_output_gate").and_then(|v| v.as_bool()) == Some(true)
            || [model_type(root), model_type(t)]
                .iter()
                .any(|m| m.starts_with("qwen3_next") || m.starts_with("qwen3_5"));
        let q_out = if gated { 2 * q } else { q };
        (q_out + q + 2 * hidden * kv_heads * head_dim, 0)
    };

    // Which layers use which attention.
    let types: Vec<String> = t
        .get("layer_types")
        .and_then(|v| v.as_array())
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let count = |f: &dyn Fn(&str) -> bool| types.iter().filter(|s| f(s)).count() as u64;
    let mut linear_layers = count(&|s| s.contains("linear") || s.contains("mamba"));
    if types.is_empty() {
        if let Some(n) = u(t, "full_attention_interval").filter(|n| *n > 1) {
            linear_layers = layers - layers / n;
        }
    }
    let window = first(t, &["sliding_window", "attention_chunk_size"]).unwrap_or(0);
    let use_sw = t
        .get("use_sliding_window")
        .and_then(|v| v.as_bool())
        .unwrap_or(true);
    let mut sliding_layers = count(&|s| s.contains("sliding") || s.contains("chunked"));
    if types.is_empty() && window > 0 && use_sw {
        sliding_layers = if let Some(n) = u(t, "sliding_window_pattern").filter(|n| *n > 0) {
            // Gemma 3: every n-th layer global.
            layers - layers / n
        } else if let Some(nope) = t.get("no_rope_layers").and_then(|v| v.as_array()) {
            // Llama 4: RoPE layers (1) attend within chunks, NoPE layers (0) globally.
            nope.iter().filter(|x| x.as_u64() == Some(1)).count() as u64
        } else if u(t, "attention_chunk_size").is_some() {
            // Llama 4's default: every `no_rope_layer_interval`-th layer is global.
            let n = u(t, "no_rope_layer_interval").unwrap_or(4).max(1);
            layers - layers / n
        } else if root
            .get("model_type")
            .and_then(|v| v.as_str())
            .is_some_and(|m| m.starts_with("gemma2"))
        {
            layers / 2
        } else {
            layers
        };
    }
    let sliding_window = if sliding_layers > 0 { window } else { 0 };

    // Linear-attention (Gated DeltaNet) layers: their projections and recurrent state.
    let (linear_attn, linear_state_bytes) = if linear_layers > 0 {
        let (w, state) = gated_delta_net(t, hidden);
        (w, state * linear_layers as f64)
    } else {
        (0, 0.0)
    };

    // Cross-attention layers (Llama 3.2 Vision, `cross_attention_layers`): weights as a
    // decoder layer, K/V from the image: one image at `max_num_tiles` tiles of
    // (image_size / patch_size)² + 1 tokens, 2 bytes per value.
    let cross_layers = t
        .get("cross_attention_layers")
        .and_then(|v| v.as_array())
        .map_or(0, |v| v.len() as u64);
    let cross_state_bytes = if cross_layers > 0 {
        let v = root.get("vision_config").unwrap_or(&Value::Null);
        let side = u(v, "image_size").unwrap_or(560) / u(v, "patch_size").unwrap_or(14).max(1);
        let image_tokens = (side * side + 1) * u(v, "max_num_tiles").unwrap_or(4);
        (cross_layers * 2 * kv_heads * head_dim * 2 * image_tokens) as f64
    } else {
        0.0
    };

    // Experts.
    let experts = first(
        t,
        &[
            "n_routed_experts",
            "num_local_experts",
            "num_experts",
            "moe_num_experts",
        ],
    )
    .unwrap_or(0);
    let top_k = first(
        t,
        &["num_experts_per_tok", "experts_per_token", "moe_top_k"],
    )
    .unwrap_or(0);
    let moe_inter = first(t, &["moe_intermediate_size", "expert_intermediate_size"])
        .or_else(|| (experts > 0).then(|| u(t, "intermediate_size")).flatten())
        .unwrap_or(0);
    let shared_width = u(t, "shared_expert_intermediate_size")
        .or_else(|| u(t, "shared_intermediate_size"))
        .or_else(|| u(t, "n_shared_experts").map(|n| n * moe_inter))
        .or_else(|| {
            // Llama 4: one shared expert of the experts' width.
            (root.get("model_type").and_then(|v| v.as_str()) == Some("llama4")
                || t.get("model_type").and_then(|v| v.as_str()) == Some("llama4_text"))
            .then_some(moe_inter)
        })
        .unwrap_or(0);
    let shared_experts = if shared_width > 0 && moe_inter > 0 {
        (shared_width / moe_inter).max(1)
    } else {
        0
    };
    let moe_layer = |i: u64| -> bool {
        if experts == 0 {
            return false;
        }
        if let Some(list) = t.get("moe_layer_freq").and_then(|v| v.as_array()) {
            return list.get(i as usize).and_then(|x| x.as_u64()) == Some(1);
        }
        if let Some(list) = t.get("mlp_only_layers").and_then(|v| v.as_array()) {
            if list.iter().any(|x| x.as_u64() == Some(i)) {
                return false;
            }
        }
        if let Some(k) = u(t, "first_k_dense_replace") {
            return i >= k;
        }
        if let Some(step) = u(t, "interleave_moe_layer_step").filter(|s| *s > 0) {
            return (i + 1) % step == 0;
        }
        if let Some(step) = u(t, "decoder_sparse_step").filter(|s| *s > 0) {
            return (i + 1) % step == 0;
        }
        true
    };
    let mut total = 0f64;
    let mut active = 0f64;
    let mut experts_total = 0f64;
    let mut moe_layers = 0u64;
    for i in 0..layers {
        let linear = if linear_layers > 0 {
            if types.is_empty() {
                let n = u(t, "full_attention_interval").unwrap_or(4);
                (i + 1) % n != 0
            } else {
                types
                    .get(i as usize)
                    .is_some_and(|s| s.contains("linear") || s.contains("mamba"))
            }
        } else {
            false
        };
        let a = if linear { linear_attn } else { attn } as f64;
        total += a;
        active += a;
        if moe_layer(i) {
            moe_layers += 1;
            let one = 3.0 * (hidden * moe_inter) as f64;
            let shared = 3.0 * (hidden * shared_width) as f64;
            let router = (hidden * experts) as f64;
            total += experts as f64 * one + shared + router;
            active += top_k as f64 * one + shared + router;
            experts_total += experts as f64 * one;
        } else {
            let d = 3.0 * (hidden * dense_inter) as f64;
            total += d;
            active += d;
        }
    }
    // Active parameters count the output projection but not the input embedding, a
    // table lookup (the convention of the gpt-oss and Llama 4 model cards).
    let emb = (vocab * hidden) as f64;
    total += if tied { emb } else { 2.0 * emb };
    active += emb;
    let vision = vision_params(root, hidden);
    total += vision;
    active += vision;
    if moe_layers == 0 {
        // CONTRACT.md §2: active parameters differ from the total only for MoE.
        active = total;
    }
    let native = native_precision(root);
    let active_width = if moe_layers > 0 {
        moe_inter * top_k + shared_width
    } else {
        dense_inter
    };
    Ok(Arch {
        layers,
        hidden,
        intermediate: dense_inter,
        heads,
        kv_heads: if mla_latent > 0 { heads } else { kv_heads },
        head_dim,
        vocab,
        tied,
        max_context,
        mla_latent,
        experts,
        experts_per_token: if experts > 0 { top_k } else { 0 },
        shared_experts,
        sliding_layers,
        sliding_window,
        linear_layers,
        linear_state_bytes,
        cross_layers,
        cross_state_bytes,
        native,
        total,
        active,
        experts_total,
        vision,
        active_width,
    })
}

/// A vision tower's parameters: its blocks (attention 4·h², MLP 2 or 3·h·i) and the
/// projector to the language model's width; 0 without `vision_config`.
fn vision_params(root: &Value, hidden: u64) -> f64 {
    root.get("vision_config")
        .filter(|v| v.is_object())
        .map(|v| {
            // Mllama's encoder adds `num_global_layers` to its local ones.
            let depth = first(v, &["depth", "num_hidden_layers", "num_layers"]).unwrap_or(0)
                + u(v, "num_global_layers").unwrap_or(0);
            let h = first(v, &["hidden_size", "embed_dim", "width"]).unwrap_or(0);
            let i = first(v, &["intermediate_size", "mlp_dim"]).unwrap_or(4 * h);
            let out = first(v, &["out_hidden_size", "projection_dim"]).unwrap_or(hidden);
            // A gated (SiLU) MLP has three matrices (Qwen2.5-VL's ViT), a GELU one two
            // (SigLIP, Llama 4's encoder).
            let act = v
                .get("hidden_act")
                .and_then(|a| a.as_str())
                .unwrap_or("gelu");
            let mlp = if act.contains("silu") || act.contains("swiglu") {
                3
            } else {
                2
            };
            (depth * (4 * h * h + mlp * h * i)) as f64 + (4 * h * out) as f64
        })
        .unwrap_or(0.0)
}
/// One Gated DeltaNet layer (Qwen3-Next, Qwen3.5): its projection weights and its
/// recurrent state per sequence in bytes: one dk × dv matrix per value head (S) and the
/// convolution's last kernel − 1 inputs (R), FP32 as llama.cpp allocates them
/// ("llama_memory_recurrent: ... R (f32) ..., S (f32) ...").
fn gated_delta_net(t: &Value, hidden: u64) -> (u64, f64) {
    let nk = u(t, "linear_num_key_heads").unwrap_or(16);
    let nv = u(t, "linear_num_value_heads").unwrap_or(32);
    let dk = u(t, "linear_key_head_dim").unwrap_or(128);
    let dv = u(t, "linear_value_head_dim").unwrap_or(128);
    let kernel = u(t, "linear_conv_kernel_dim").unwrap_or(4);
    let conv_dim = 2 * nk * dk + nv * dv;
    let weights =
        hidden * (conv_dim + nv * dv) + hidden * 2 * nv + nv * dv * hidden + conv_dim * kernel;
    let state = (nv * dk * dv + (kernel - 1) * conv_dim) as f64 * 4.0;
    (weights, state)
}

fn native_precision(root: &Value) -> &'static str {
    let q = root
        .get("quantization_config")
        .and_then(|q| q.get("quant_method").or_else(|| q.get("quant_algo")))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_lowercase();
    if q.contains("mxfp4") {
        return "mxfp4";
    }
    // compressed-tensors W4A16 on the experts (Kimi K2 Thinking): 4-bit weights.
    let four_bit = root
        .get("quantization_config")
        .and_then(|q| q.get("config_groups"))
        .and_then(|g| g.as_object())
        .is_some_and(|g| {
            g.values().any(|c| {
                c.get("weights")
                    .and_then(|w| w.get("num_bits"))
                    .and_then(|b| b.as_u64())
                    == Some(4)
            })
        });
    if four_bit {
        return "int4-experts";
    }
    if q.contains("fp8") {
        return "fp8";
    }
    let dtype = root
        .get("torch_dtype")
        .or_else(|| root.get("dtype"))
        .and_then(|v| v.as_str())
        .unwrap_or("bfloat16");
    match dtype {
        "float16" => "fp16",
        "float32" => "fp32",
        _ => "bf16",
    }
}
