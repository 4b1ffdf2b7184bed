#pragma once
// Rotary position embedding (kernels::Rotary: fused on the CPU, fast::rope elsewhere)
// with per-row offsets and the scaling variants models ship (none, linear, llama3, YaRN).
#include <optional>

#include <mlx/array.h>

#include "heron/kernels/rope.h"
#include "heron/model/config.h"

namespace heron::model {

class Rope {
 public:
  // freq_factors: per-pair divisors some GGUF files ship as rope_freqs.weight.
  Rope(const ModelConfig& c, const std::optional<mlx::core::array>& freq_factors = std::nullopt);
  // x [B, heads, L, head_dim]; offsets int32 [B].
  mlx::core::array operator()(const mlx::core::array& x, const mlx::core::array& offsets) const;
  // YaRN multiplies rotated queries and keys by this (1 otherwise); attention folds its
  // square into the softmax scale instead.
  float attention_factor() const { return attention_factor_; }

 private:
  kernels::Rotary rotary_;
  float attention_factor_ = 1.0f;
};

}  // namespace heron::model
