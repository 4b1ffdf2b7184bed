#pragma once
#include <memory>
#include <optional>
#include <string>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"
#include "heron/model/layers/linear.h"
#include "heron/model/layers/norm.h"
#include "heron/model/layers/rope.h"

namespace heron::model {

// Attention of q [B, heads, L, D] (the L positions a cache was just updated with) over
// what the cache returned: its mask where it gave one (a sliding window's ring), else a
// causal band `window` positions wide (window > 0) or plain causal attention. Grouped
// query heads read kv head h / (heads / kv_heads). sinks [heads]: each head's attention
// sink (gpt-oss). The attention layer's own path, public so that tests can run it on
// every device and dtype.
mlx::core::array attend(const mlx::core::array& q, const cache::KVHistory& history, float scale,
                        int window, const std::optional<mlx::core::array>& sinks = std::nullopt);

// Grouped-query self-attention through kernels::scaled_dot_product_attention
// (a fused CPU kernel; MLX's fast:: version on other devices and dtypes).
class Attention {
 public:
  // qk_norm: per-head RMSNorm on queries and keys before RoPE (Qwen3, Gemma 3).
  // window > 0: each query sees only the last `window` positions, itself included.
  // PREFIX.sinks, where present, are the heads' attention sinks (gpt-oss). With the
  // config's attention_output_gate, each head's q_proj rows are its queries then a gate,
  // and the heads' outputs are scaled by the gate's sigmoid (Qwen3-Next).
  static Attention load(Weights& w, const std::string& prefix, const ModelConfig& c,
                        std::shared_ptr<const Rope> rope, bool qk_norm, int window = 0);
  mlx::core::array operator()(const mlx::core::array& x, const Batch& batch,
                              cache::Cache& cache) const;

 private:
  LinearGroup qkv_;  // q, k and v projections
  Linear o_;
  std::optional<RMSNorm> q_norm_, k_norm_;
  std::optional<mlx::core::array> sinks_;
  std::shared_ptr<const Rope> rope_;
  int heads_ = 0, kv_heads_ = 0, head_dim_ = 0, window_ = 0;
  bool output_gate_ = false;
  float scale_ = 1.0f;
};

}  // namespace heron::model
