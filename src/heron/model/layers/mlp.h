#pragma once
#include <string>

#include "heron/model/layers/linear.h"

namespace heron::model {

// SwiGLU feed-forward: down(silu(gate(x)) * up(x)).
class GatedMLP {
 public:
  static GatedMLP load(Weights& w, const std::string& prefix);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  LinearGroup gate_up_;  // gate and up projections
  Linear down_;
};

}  // namespace heron::model
