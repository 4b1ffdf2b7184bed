#include "heron/store/mlx_lm_layout.h"

#include <array>
#include <string_view>

#include <mlx/ops.h>

namespace heron::store {

namespace mx = mlx::core;

namespace {

io::WeightMap with_mlx_lm_module_paths(io::WeightMap weights) {
  bool multimodal = false;
  for (const auto& [name, a] : weights)
    multimodal = multimodal || name.starts_with("model.language_model.");
  if (!multimodal) return weights;
  io::WeightMap renamed;
  for (auto& [name, a] : weights) {
    if (name.starts_with("model.visual.")) continue;
    if (name.starts_with("model.language_model.")) {
      renamed.insert_or_assign("language_model.model." + name.substr(21), std::move(a));
    } else if (name.starts_with("lm_head.")) {
      renamed.insert_or_assign("language_model." + name, std::move(a));
    } else {
      renamed.insert_or_assign(name, std::move(a));
    }
  }
  return renamed;
}

io::WeightMap with_sanitized_qwen3_next(io::WeightMap weights) {
  static constexpr std::array<std::string_view, 5> kOffsetNorms{
      ".input_layernorm.weight", ".post_attention_layernorm.weight", "model.norm.weight",
      ".q_norm.weight", ".k_norm.weight"};
  bool hugging_face = false;
  for (const auto& [name, a] : weights) {
    hugging_face = hugging_face || (name.ends_with(".linear_attn.conv1d.weight") && a.ndim() == 3 &&
                                    a.shape(2) != 1);
  }
  if (!hugging_face) return weights;
  for (auto& [name, a] : weights) {
    if (name.ends_with(".linear_attn.conv1d.weight")) {
      a = mx::swapaxes(a, 1, 2);
      continue;
    }
    for (auto suffix : kOffsetNorms) {
      if (name.ends_with(suffix) && a.ndim() == 1 && !name.starts_with("mtp.")) {
        a = mx::add(a, mx::array(1.0f, a.dtype()));
      }
    }
  }
  return weights;
}

}  // namespace

io::WeightMap in_mlx_lm_layout(io::WeightMap weights, const nlohmann::json& config) {
  weights = with_mlx_lm_module_paths(std::move(weights));
  if (config.value("model_type", "") == "qwen3_next") {
    weights = with_sanitized_qwen3_next(std::move(weights));
  }
  return weights;
}

}  // namespace heron::store
