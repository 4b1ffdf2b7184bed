#pragma once
// A tiny fixture model's reference_logits.safetensors (tools/make_reference_logits.py's
// layout): the tokens and mlx-lm's logits for them, and how far ours are from those.
#include <string>
#include <vector>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

namespace heron::test {

struct MlxLmReference {
  std::vector<int> tokens;
  mlx::core::array logits{0.0f};  // [tokens, vocab]
};

inline MlxLmReference mlx_lm_reference(const std::string& model_dir) {
  namespace mx = mlx::core;
  auto ref = mx::load_safetensors(model_dir + "/reference_logits.safetensors").first;
  auto t = mx::astype(ref.at("tokens"), mx::int32);
  mx::eval(t);
  return {{t.data<int32_t>(), t.data<int32_t>() + t.size()}, ref.at("logits")};
}

// max |ours - expected| over max |expected|.
inline float relative_error_to(const mlx::core::array& ours, const mlx::core::array& expected) {
  namespace mx = mlx::core;
  return mx::max(mx::abs(mx::subtract(mx::astype(ours, mx::float32), expected))).item<float>() /
         mx::max(mx::abs(expected)).item<float>();
}

}  // namespace heron::test
