use super::*;

fn fixture(name: &str) -> &'static str {
    match name {
        "gpt-oss-120b" => include_str!("../../../../tests/data/configs/gpt-oss-120b.json"),
        "gpt-oss-20b" => include_str!("../../../../tests/data/configs/gpt-oss-20b.json"),
        "deepseek-v3" => include_str!("../../../../tests/data/configs/deepseek-v3.json"),
        "kimi-k2" => include_str!("../../../../tests/data/configs/kimi-k2.json"),
        "kimi-k2-thinking" => include_str!("../../../../tests/data/configs/kimi-k2-thinking.json"),
        "glm-4.5" => include_str!("../../../../tests/data/configs/glm-4.5.json"),
        "glm-4.5-air" => include_str!("../../../../tests/data/configs/glm-4.5-air.json"),
        "llama-4-scout" => include_str!("../../../../tests/data/configs/llama-4-scout.json"),
        "llama-4-maverick" => include_str!("../../../../tests/data/configs/llama-4-maverick.json"),
        "gemma-3-27b" => include_str!("../../../../tests/data/configs/gemma-3-27b.json"),
        "minimax-m2" => include_str!("../../../../tests/data/configs/minimax-m2.json"),
        "qwen3-235b-a22b" => include_str!("../../../../tests/data/configs/qwen3-235b-a22b.json"),
        "qwen3-30b-a3b" => include_str!("../../../../tests/data/configs/qwen3-30b-a3b.json"),
        "qwen3-coder-480b-a35b" => {
            include_str!("../../../../tests/data/configs/qwen3-coder-480b-a35b.json")
        }
        "qwen3-next-80b-a3b" => {
            include_str!("../../../../tests/data/configs/qwen3-next-80b-a3b.json")
        }
        "llama-3.1-8b" => include_str!("../../../../tests/data/configs/llama-3.1-8b.json"),
        "glm-5" => include_str!("../../../../tests/data/configs/glm-5.json"),
        "qwen3.5-27b" => include_str!("../../../../tests/data/configs/qwen3.5-27b.json"),
        "qwen3.5-35b-a3b" => include_str!("../../../../tests/data/configs/qwen3.5-35b-a3b.json"),
        "llama-3.2-11b-vision" => {
            include_str!("../../../../tests/data/configs/llama-3.2-11b-vision.json")
        }
        "llama-3.2-90b-vision" => {
            include_str!("../../../../tests/data/configs/llama-3.2-90b-vision.json")
        }
        "phi-4" => include_str!("../../../../tests/data/configs/phi-4.json"),
        "mistral-small-3.1-24b" => {
            include_str!("../../../../tests/data/configs/mistral-small-3.1-24b.json")
        }
        "gemma-3-12b" => include_str!("../../../../tests/data/configs/gemma-3-12b.json"),
        "llama-3.2-1b" => include_str!("../../../../tests/data/configs/llama-3.2-1b.json"),
        "llama-3.2-3b" => include_str!("../../../../tests/data/configs/llama-3.2-3b.json"),
        "qwen2.5-vl-72b" => include_str!("../../../../tests/data/configs/qwen2.5-vl-72b.json"),
        other => panic!("no fixture {other}"),
    }
}

/// Total and active parameters (billions) counted from each family's config, against
/// the figures its vendor publishes, within 2 %.
#[test]
fn parameters_match_the_vendors_figures() {
    // (fixture, total, active, where the vendor says so)
    let cases: &[(&str, f64, f64, &str)] = &[
        // gpt-oss model card: 116.83B total, 5.13B active; 20.91B, 3.61B.
        ("gpt-oss-120b", 116.83, 5.13, "openai/gpt-oss model card"),
        ("gpt-oss-20b", 20.91, 3.61, "openai/gpt-oss model card"),
        // DeepSeek-V3 report: 671B total, 37B activated.
        ("deepseek-v3", 671.0, 37.0, "DeepSeek-V3 technical report"),
        // Kimi K2 README: 1T total (1.04T with the MTP layer), 32B activated.
        ("kimi-k2", 1026.0, 32.0, "MoonshotAI/Kimi-K2 README"),
        // GLM-4.5 README: 355B / 32B; GLM-4.5-Air 106B / 12B (MTP layer included there).
        ("glm-4.5", 355.0, 32.0, "zai-org/GLM-4.5 README"),
        ("glm-4.5-air", 106.0, 12.6, "zai-org/GLM-4.5 README"),
        // GLM-5 model card: 744B total, 40B active.
        ("glm-5", 744.0, 40.0, "zai-org/GLM-5 model card"),
        // Qwen3.5-27B: a dense 27B (gated attention, 48 of 64 layers Gated DeltaNet).
        ("qwen3.5-27b", 27.0, 27.0, "Qwen/Qwen3.5-27B model card"),
        // "A3B" as Qwen counts it, the input embedding included (Qwen3-30B-A3B: 3.3B).
        (
            "qwen3.5-35b-a3b",
            35.0,
            3.3,
            "Qwen/Qwen3.5-35B-A3B model card",
        ),
        // Llama 4 model card: Scout 109B / 17B, Maverick 400B / 17B.
        (
            "llama-4-scout",
            109.0,
            17.0,
            "meta-llama/llama-models Llama 4 model card",
        ),
        (
            "llama-4-maverick",
            400.0,
            17.0,
            "meta-llama/llama-models Llama 4 model card",
        ),
        // MiniMax-M2 model card: 230B total, 10B active.
        ("minimax-m2", 230.0, 10.3, "MiniMaxAI/MiniMax-M2 model card"),
        // Qwen3 / Qwen3-Coder / Qwen3-Next model cards.
        (
            "qwen3-235b-a22b",
            235.0,
            22.0,
            "Qwen/Qwen3-235B-A22B model card",
        ),
        (
            "qwen3-coder-480b-a35b",
            480.0,
            35.0,
            "Qwen/Qwen3-Coder-480B-A35B model card",
        ),
        (
            "qwen3-next-80b-a3b",
            80.0,
            3.46,
            "Qwen/Qwen3-Next-80B-A3B model card",
        ),
        // Dense: active = total.
        (
            "llama-3.1-8b",
            8.03,
            8.03,
            "meta-llama/Llama-3.1-8B model card",
        ),
        (
            "gemma-3-27b",
            27.4,
            27.4,
            "google/gemma-3-27b-it model card",
        ),
    ];
    for (name, total, active, src) in cases {
        let m = import(fixture(name), &ImportOptions::default()).expect(name);
        let t = m.params_b / 1e9;
        let a = m.active_params_b / 1e9;
        assert!(
            (t / total - 1.0).abs() < 0.02,
            "{name}: total {t:.2} vs {total} ({src})"
        );
        assert!(
            (a / active - 1.0).abs() < 0.05,
            "{name}: active {a:.2} vs {active} ({src})"
        );
    }
}

/// Importing configs of models already in the catalog gives the catalog's figures.
#[test]
fn imports_agree_with_the_catalog() {
    let cat = crate::advisor::fixtures::advisor().catalog.clone();
    for (name, id) in [
        ("deepseek-v3", "deepseek-v3"),
        ("qwen3-235b-a22b", "qwen3-235b-a22b"),
        ("qwen3-30b-a3b", "qwen3-30b-a3b"),
        ("llama-3.1-8b", "llama-3.1-8b"),
    ] {
        let m = import(fixture(name), &ImportOptions::default()).expect(name);
        let c = cat.model(id).expect(id);
        assert!(
            (m.params_b / 1e9 / c.params_b - 1.0).abs() < 0.01,
            "{name}: {} vs catalog {}",
            m.params_b / 1e9,
            c.params_b
        );
    }
}

/// The attention layout each family declares becomes the catalog's fields.
#[test]
fn layouts_are_read() {
    let field = |name: &str, key: &str| -> String {
        let m = import(fixture(name), &ImportOptions::default()).expect(name);
        m.toml
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")).map(str::to_string))
            .unwrap_or_default()
    };
    // gpt-oss: half the layers in 128-token windows; MXFP4 experts.
    assert_eq!(field("gpt-oss-120b", "sliding_layers"), "18");
    assert_eq!(field("gpt-oss-120b", "sliding_window"), "128");
    assert_eq!(field("gpt-oss-120b", "native_precision"), "\"mxfp4\"");
    // Llama 4: three of four layers attend within 8192-token chunks.
    assert_eq!(field("llama-4-scout", "sliding_layers"), "36");
    assert_eq!(field("llama-4-scout", "sliding_window"), "8192");
    assert_eq!(field("llama-4-scout", "shared_experts"), "1");
    // Gemma 3: five of six layers in 1024-token windows.
    assert_eq!(field("gemma-3-27b", "sliding_layers"), "52");
    // Qwen3-Next: three of four layers are Gated DeltaNet.
    assert_eq!(field("qwen3-next-80b-a3b", "linear_layers"), "36");
    // Its recurrent state as llama.cpp allocates it: 149.62 MiB for Qwen3.5-27B's shape.
    assert_eq!(field("qwen3.5-27b", "linear_state_mb"), "156.9");
    assert_eq!(field("glm-5", "kv_latent_dim"), "576");
    // Llama 3.2 Vision: 8 cross-attention layers hold one image's K/V (4 tiles of 1601
    // tokens), not the text's.
    assert_eq!(field("llama-3.2-11b-vision", "cross_layers"), "8");
    assert_eq!(field("llama-3.2-11b-vision", "cross_state_mb"), "209.8");
    // MLA: the latent is kv_lora_rank + rope dim; FP8 weights.
    assert_eq!(field("kimi-k2", "kv_form"), "\"mla\"");
    assert_eq!(field("kimi-k2", "kv_latent_dim"), "576");
    assert_eq!(field("kimi-k2", "native_precision"), "\"fp8\"");
    assert_eq!(
        field("kimi-k2-thinking", "native_precision"),
        "\"int4-experts\""
    );
    assert_eq!(field("glm-4.5", "shared_experts"), "1");
}

#[test]
fn unusable_configs_say_why() {
    let o = ImportOptions::default();
    assert!(import("[1, 2]", &o).unwrap_err().contains("object"));
    assert!(import("{\"hidden_size\": 8}", &o)
        .unwrap_err()
        .contains("num_hidden_layers"));
    let no_name = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}"#;
    assert!(import(no_name, &o).unwrap_err().contains("--id"));
    let named = ImportOptions {
        id: Some("tiny".into()),
        ..o
    };
    let m = import(no_name, &named).unwrap();
    assert!(m.missing.iter().any(|f| f.starts_with("max_context")));
    assert!(m.missing.iter().any(|f| f.starts_with("source")));
}
