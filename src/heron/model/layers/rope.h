#pragma once
// Rotary position embedding through fast::rope, with per-row offsets and the
// scaling variants models ship (none, linear, llama3).
#include <optional>

#include <mlx/array.h>

#include "heron/model/config.h"

namespace heron::model {

class Rope {
 public:
  // freq_factors: per-pair divisors some GGUF files ship as rope_freqs.weight.
  Rope(const ModelConfig& c, std::optional<mlx::core::array> freq_factors = std::nullopt);
  // x [B, heads, L, head_dim]; offsets int32 [B].
  mlx::core::array operator()(const mlx::core::array& x, const mlx::core::array& offsets) const;

 private:
  int dims_;
  bool traditional_;
  float base_;
  float scale_ = 1.0f;
  std::optional<mlx::core::array> freqs_;  // when set, replaces base (MLX convention)
};

}  // namespace heron::model
