//! The KV cache: bytes per token of context from the attention layout of the
//! architecture (DeepSeek-V2 paper §2.1 for MLA; GQA/MQA/MHA otherwise).

use crate::advisor::catalog::KvForm;
use crate::advisor::workload::Workload;

/// KV cache bytes per token: 2 (K and V) × layers × KV heads × head dim × bytes
/// (GQA/MQA/MHA), or layers × latent width × bytes for MLA (DeepSeek-V2 paper §2.1).
pub fn kv_bytes_per_token(w: &Workload) -> f64 {
    let a = &w.arch;
    let bytes = if w.kv_8bit { 1.0 } else { 2.0 };
    let per = match a.kv_form {
        KvForm::Mla => a.layers * a.kv_latent_dim * bytes,
        _ => 2.0 * a.layers * a.kv_heads * a.head_dim * bytes,
    };
    per * a.kv_copies
}
