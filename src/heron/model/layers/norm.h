#pragma once
#include <string>

#include <mlx/array.h>

#include "heron/model/weights.h"

namespace heron::model {

class RMSNorm {
 public:
  // offset: the stored weight w scales as 1 + w (Gemma's Hugging Face checkpoints).
  static RMSNorm load(Weights& w, const std::string& name, float eps, bool offset = false);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  mlx::core::array weight_{0.0f};
  float eps_ = 1e-6f;
};

}  // namespace heron::model
