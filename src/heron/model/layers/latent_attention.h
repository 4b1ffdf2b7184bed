#pragma once
// Multi-head latent attention (DeepSeek V2/V3, GLM-4.7-Flash) with the absorbed
// projections: the cache keeps, per position, the normalized latent (kv_lora_rank values)
// and one rotary key shared by the heads, never per-head keys and values. Queries are
// taken into the latent space (embed_q) and each head's output out of it (unembed_out),
// so attention runs over the latents themselves (cache::LatentCache keeps them; the
// attention kernel reads its values, the latents, in place as the rows' first columns).
#include <memory>
#include <optional>
#include <string>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/multi_linear.h"
#include "heron/model/layers/norm.h"
#include "heron/model/layers/rope.h"

namespace heron::model {

class LatentAttention {
 public:
  // PREFIX.{q_proj | q_a_proj, q_a_layernorm, q_b_proj}, kv_a_proj_with_mqa,
  // kv_a_layernorm, o_proj, and either embed_q / unembed_out (mlx-lm) or kv_b_proj (the
  // Hugging Face layout, split into the two here; when quantized, dequantized to be split
  // and each half quantized again alike, as mlx-lm does).
  static LatentAttention load(Weights& w, const std::string& prefix, const ModelConfig& c);
  mlx::core::array operator()(const mlx::core::array& x, const Batch& batch,
                              cache::Cache& cache) const;

 private:
  // The query and latent projections of x: q_a_proj and kv_a_proj_with_mqa in one product
  // where they are stored alike, or q_proj and kv_a_proj_with_mqa.
  LinearGroup input_;
  std::optional<RMSNorm> q_norm_;  // q_a_layernorm, with q_b_
  std::optional<Linear> q_b_;
  RMSNorm latent_norm_;
  MultiLinear embed_q_, unembed_out_;
  Linear o_;
  std::shared_ptr<const Rope> rope_;
  LatentAttentionDims dims_;
  int heads_ = 0;
  float scale_ = 1.0f;
};

}  // namespace heron::model
