#pragma once
#include <string>

#include "heron/model/layers/linear.h"

namespace heron::model {

enum class Activation { Silu, GeluTanh };

// silu(gate) * up as one compiled element-wise kernel (SwiGLU's gating).
mlx::core::array swiglu(const mlx::core::array& gate, const mlx::core::array& up);
// gpt-oss's clamped form: gate clamped to at most `limit`, up to [-limit, limit], then
// gate * sigmoid(1.702 gate) * (up + 1).
mlx::core::array clamped_swiglu(const mlx::core::array& gate, const mlx::core::array& up,
                                float limit);

// Gated feed-forward: down(act(gate(x)) * up(x)); SiLU (SwiGLU) or tanh-approximated
// GELU (GeGLU, Gemma).
class GatedMLP {
 public:
  static GatedMLP load(Weights& w, const std::string& prefix,
                       Activation activation = Activation::Silu);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  LinearGroup gate_up_;  // gate and up projections
  Linear down_;
  Activation activation_ = Activation::Silu;
};

}  // namespace heron::model
