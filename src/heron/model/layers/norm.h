#pragma once
#include <string>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

class RMSNorm {
 public:
  static RMSNorm load(Weights& w, const std::string& name, float eps);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  mlx::core::array weight_{0.0f};
  float eps_ = 1e-6f;
};

}  // namespace heron::model
