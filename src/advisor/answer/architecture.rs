//! What a model's architecture does to its memory, said in the reply: a diffusion
//! pipeline's parts and the offload mode the bill assumes (with its cost), a native
//! expert format, windowed and linear-attention layers, MLA under tensor parallelism,
//! a vision encoder, the vendor's own published minimum; and, for a name the catalog
//! does not know, that the answer is for a generic model of the size given.

use super::context::Context;
use super::unknown;
use crate::advisor::catalog::KvForm;
use crate::advisor::estimate::{diffusion_offloads_encoders, kv_sequence_bytes};
use crate::advisor::parse::Lang;
use crate::advisor::reply::{gb, params, t};
use crate::advisor::workload::{Precision, Workload};

/// Practical host-to-device rate of a PCIe 4.0 x16 link, GB/s (32 GB/s theoretical;
/// pinned-memory copies reach about 25).
const PCIE_GBS: f64 = 25.0;
/// Denoising steps of a usual run: "28 steps can be a good trade-off" (black-forest-labs
/// flux2 docs/flux2_dev_hf.md; its example runs 50). The sequential-offload cost is per
/// step.
const DENOISE_STEPS: f64 = 28.0;

/// The notes for `w`, each one line.
pub fn notes(ctx: &Context<'_>, w: &Workload) -> Vec<String> {
    let lang = ctx.lang;
    let mut out = Vec::new();
    let Some(m) = w.model.as_deref().and_then(|id| ctx.cat.model(id)) else {
        if let Some(name) = &ctx.parsed.unknown_model {
            out.push(unknown::generic_note(name, w, lang));
        }
        return out;
    };
    let a = &w.arch;
    let l = &a.layout;
    if diffusion_offloads_encoders(w) {
        let denoiser = a.params_b - l.text_encoder_b - l.vae_b;
        let enc_gb = l.text_encoder_b * 2.0;
        let per_image = enc_gb / PCIE_GBS;
        let seq = denoiser * 2.0 / PCIE_GBS * DENOISE_STEPS;
        out.push(match lang {
            Lang::Zh => format!(
                "流水线：去噪 transformer {} + 文本编码器 {} + VAE {}。按厂商示例（diffusers `enable_model_cpu_offload()`），文本编码器先编码提示词再移回内存，显存里常驻的只是 transformer 和 VAE；代价是每次换提示词多搬 {} GB 过 PCIe（约 {:.1} 秒）。FP8 权重（4090、L40S、H100 等 FP8 卡）把 transformer 减半；逐层 offload（`enable_sequential_cpu_offload()`）能压到几 GB，但每步都要搬一遍 transformer，约多 {:.0} 秒一张图（{} 步）。",
                params(denoiser), params(l.text_encoder_b), params(l.vae_b), gb(enc_gb), per_image, seq, DENOISE_STEPS
            ),
            Lang::En => format!(
                "Pipeline: denoising transformer {} + text encoders {} + VAE {}. As the vendor's example does (diffusers `enable_model_cpu_offload()`), the text encoders run first and go back to host memory, so only the transformer and VAE stay on the GPU; the cost is moving {} GB over PCIe per new prompt (about {:.1} s). FP8 weights (on FP8 cards: 4090, L40S, H100) halve the transformer; layer-by-layer offload (`enable_sequential_cpu_offload()`) fits in a few GB but moves the whole transformer every step, about {:.0} s more per image ({} steps).",
                params(denoiser), params(l.text_encoder_b), params(l.vae_b), gb(enc_gb), per_image, seq, DENOISE_STEPS
            ),
        });
    }
    if l.native_expert_bits > 0.0 && w.precision == Precision::Int4 {
        let bits = l.native_expert_bits;
        let format = if bits < 4.4 {
            "MXFP4"
        } else {
            "INT4 (group 32)"
        };
        let experts_gb = l.expert_params_b * bits / 8.0;
        let rest_gb = (a.params_b - l.expert_params_b) * 2.0;
        out.push(match lang {
            Lang::Zh => format!(
                "原生格式：专家权重为 {format}（每参数 {bits} bit，{} GB），注意力、路由和嵌入为 BF16（{} GB）；下面的 INT4 即这个原生格式，不需要再量化。",
                gb(experts_gb), gb(rest_gb)
            ),
            Lang::En => format!(
                "Native format: the experts ship in {format} ({bits} bits per weight, {} GB), attention, router and embeddings in BF16 ({} GB); the INT4 below is that native format, no further quantization.",
                gb(experts_gb), gb(rest_gb)
            ),
        });
    }
    if !a.diffusion && (l.sliding_layers > 0.0 || l.linear_layers > 0.0) {
        let full = a.layers - l.sliding_layers - l.linear_layers;
        let mut s = String::new();
        if l.sliding_layers > 0.0 {
            s += &match lang {
                Lang::Zh => format!(
                    "{:.0} 层注意力只看最近 {:.0} 个 token（滑动窗口/分块局部注意力），KV 到此封顶；",
                    l.sliding_layers, l.sliding_window
                ),
                Lang::En => format!(
                    "{:.0} layers attend within {:.0} tokens (sliding-window or chunked-local attention), their KV capped there; ",
                    l.sliding_layers, l.sliding_window
                ),
            };
        }
        if l.linear_layers > 0.0 {
            s += &match lang {
                Lang::Zh => format!(
                    "{:.0} 层为线性注意力（Gated DeltaNet），每个序列固定 {} GB 状态；",
                    l.linear_layers,
                    gb(l.linear_state_bytes / 1e9)
                ),
                Lang::En => format!(
                    "{:.0} layers are linear attention (Gated DeltaNet) with a fixed {} GB state per sequence; ",
                    l.linear_layers,
                    gb(l.linear_state_bytes / 1e9)
                ),
            };
        }
        let ctx_tokens = w.context as f64;
        let seq = kv_sequence_bytes(w, ctx_tokens) / 1e9;
        s += &match lang {
            Lang::Zh => format!(
                "只有 {full:.0} 层全注意力的 KV 随上下文增长（{} token 一个序列共 {} GB）。",
                w.context,
                gb(seq)
            ),
            Lang::En => format!(
                "only the {full:.0} full-attention layers grow with the context ({} tokens: {} GB per sequence).",
                w.context,
                gb(seq)
            ),
        };
        out.push(s);
    }
    if a.kv_form == KvForm::Mla && w.concurrency > 1 {
        out.push(
            t(
                lang,
                "MLA：KV 只存压缩后的潜向量，但张量并行时每张卡都存完整一份，不随卡数平分。",
                "MLA: the KV cache holds only the compressed latent, but under tensor parallelism every card holds all of it; it does not divide by the card count.",
            )
            .to_string(),
        );
    }
    if l.cross_layers > 0.0 {
        out.push(match lang {
            Lang::Zh => format!(
                "{:.0} 层交叉注意力读图片的 K/V：每个序列（一张图、最多分块）固定约 {} GB，不随文本增长。",
                l.cross_layers,
                gb(l.cross_state_bytes / 1e9)
            ),
            Lang::En => format!(
                "{:.0} cross-attention layers read the image's K/V: a fixed {} GB per sequence (one image at its most tiles), not growing with the text.",
                l.cross_layers,
                gb(l.cross_state_bytes / 1e9)
            ),
        });
    }
    if l.vision_params_b > 0.0 {
        out.push(match lang {
            Lang::Zh => format!(
                "含视觉编码器 {}（已计入参数量）；图片会变成几百到上千个 token，同样占 KV cache。",
                params(l.vision_params_b)
            ),
            Lang::En => format!(
                "Includes a {} vision encoder (counted in the parameters); each image becomes hundreds to thousands of tokens, which take KV cache too.",
                params(l.vision_params_b)
            ),
        });
    }
    if !m.vendor_note.is_empty() {
        out.push(format!(
            "{}{}",
            t(lang, "厂商说明（原文）：", "Vendor: "),
            m.vendor_note
        ));
    }
    out
}
