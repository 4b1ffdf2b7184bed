#pragma once
// A linear layer per attention head: weight [heads, out, in], float or quantized, applied
// to each head's rows (latent attention's absorbed projections).
#include <optional>
#include <string>

#include <mlx/array.h>

#include "heron/model/layers/linear.h"

namespace heron::model {

class MultiLinear {
 public:
  // PREFIX.weight [heads, out, in] (+ .scales/.biases when quantized).
  static MultiLinear load(Weights& w, const std::string& prefix);
  // A float weight [heads, out, in] as it is.
  static MultiLinear from(mlx::core::array weight);
  // A float weight [heads, out, in] quantized as `quant` says (its bits, group and mode),
  // or kept float where its rows do not split into whole groups.
  static MultiLinear quantized(const mlx::core::array& weight, const QuantParams& quant,
                               mlx::core::Dtype dtype);
  // x [B, heads, L, in] -> [B, heads, L, out].
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  mlx::core::array weight_{0.0f};
  std::optional<mlx::core::array> weight_t_;  // float: [heads, in, out], made once
  std::optional<mlx::core::array> scales_, biases_;
  QuantParams quant_;
};

}  // namespace heron::model
