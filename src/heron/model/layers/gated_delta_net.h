#pragma once
// Gated delta-net linear attention (Qwen3-Next, Qwen3.5), in place of attention in three
// of every four layers: projections to queries, keys and values (through a causal
// depthwise convolution and SiLU), an output gate z, and per value head a write
// strength beta and a decay g; the gated delta rule (kernels::gated_delta) carries a
// state per head from position to position, and the heads' outputs, RMS-normed and
// gated by SiLU(z), are projected back. Its cache is a RecurrentCache.
#include <string>
#include <vector>

#include "heron/cache/cache.h"
#include "heron/model/batch.h"
#include "heron/model/layers/linear.h"

namespace heron::model {

class GatedDeltaNet {
 public:
  // PREFIX.in_proj_qkv, .in_proj_z, .in_proj_b, .in_proj_a (Qwen3.5), or Qwen3-Next's
  // PREFIX.in_proj_qkvz and .in_proj_ba (rows grouped by key head, reordered here into
  // Qwen3.5's layers);
  // PREFIX.conv1d.weight ([channels, 1, kernel] or mlx-lm's [channels, kernel, 1]),
  // .A_log, .dt_bias, .norm.weight and .out_proj.
  static GatedDeltaNet load(Weights& w, const std::string& prefix, const ModelConfig& c);
  mlx::core::array operator()(const mlx::core::array& x, const Batch& batch,
                              cache::Cache& cache) const;

 private:
  // The recurrent part for one sequence and its cache: qkv [1, L, channels], b and a
  // [1, L, value_heads] -> the delta rule's output [1, L, value_heads, value_head_dim].
  mlx::core::array recur(const mlx::core::array& qkv, const mlx::core::array& b,
                         const mlx::core::array& a, cache::Cache& cache) const;

  LinearGroup in_;  // qkv, z, b, a
  Linear out_;
  std::vector<mlx::core::array> taps_;  // the convolution's weights per offset, [channels]
  mlx::core::array decay_{0.0f};        // -exp(A_log) [value_heads], float32
  mlx::core::array dt_bias_{0.0f};      // [value_heads]
  mlx::core::array norm_{0.0f};         // [value_head_dim]
  // [key_head_dim]: the constant weights that normalize q (with the readout scale) and k.
  mlx::core::array q_scale_{0.0f}, k_scale_{0.0f};
  float qk_eps_ = 1e-6f;
  LinearAttentionDims dims_;
  float eps_ = 1e-6f;
};

}  // namespace heron::model
