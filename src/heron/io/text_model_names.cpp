#include "heron/io/text_model_names.h"

#include <array>
#include <string_view>
#include <utility>

namespace heron::io {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kRenames{{
    {"model.language_model.", "model."},
    {"language_model.model.", "model."},
    {"language_model.lm_head.", "lm_head."},
}};

constexpr std::array<std::string_view, 3> kVision{"model.visual.", "visual.", "vision_tower."};

}  // namespace

std::string text_model_name(const std::string& name) {
  for (const auto& [from, to] : kRenames) {
    if (name.starts_with(from)) return std::string(to) + name.substr(from.size());
  }
  return name;
}

WeightMap with_text_model_names(WeightMap weights) {
  bool multimodal = false;
  for (const auto& [name, array] : weights)
    multimodal = multimodal || text_model_name(name) != name;
  if (!multimodal) return weights;
  WeightMap renamed;
  for (auto& [name, array] : weights) {
    bool vision = false;
    for (auto prefix : kVision) vision = vision || name.starts_with(prefix);
    if (!vision) renamed.insert_or_assign(text_model_name(name), std::move(array));
  }
  return renamed;
}

}  // namespace heron::io
