#pragma once
#include <string>
#include <utility>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

class RMSNorm {
 public:
  static RMSNorm load(Weights& w, const std::string& name, float eps);
  mlx::core::array operator()(const mlx::core::array& x) const;
  // The residual step of a pre-norm block: {h + delta, norm(h + delta)}, fused into
  // one kernel on GPUs.
  std::pair<mlx::core::array, mlx::core::array> add_and_norm(const mlx::core::array& h,
                                                             const mlx::core::array& delta) const;

 private:
  mlx::core::array weight_{0.0f};
  float eps_ = 1e-6f;
};

}  // namespace heron::model
