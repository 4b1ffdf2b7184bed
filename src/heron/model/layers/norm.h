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

// LayerNorm with weight and bias (BERT's "LayerNorm.weight" / "LayerNorm.bias").
class LayerNorm {
 public:
  static LayerNorm load(Weights& w, const std::string& prefix, float eps);
  mlx::core::array operator()(const mlx::core::array& x) const;

 private:
  mlx::core::array weight_{0.0f};
  mlx::core::array bias_{0.0f};
  float eps_ = 1e-12f;
};

}  // namespace heron::model
