#include "heron/model/weights.h"

#include "heron/core/error.h"

namespace heron::model {

mlx::core::array Weights::take(const std::string& name) {
  auto w = take_optional(name);
  if (!w) throw Error(source_ + ": missing tensor '" + name + "'");
  return *w;
}

std::optional<mlx::core::array> Weights::take_optional(const std::string& name) {
  auto it = map_.find(name);
  if (it == map_.end()) return std::nullopt;
  auto w = it->second;
  map_.erase(it);
  return w;
}

QuantScheme Weights::quant_scheme(const std::string& prefix) const {
  auto it = layers_.find(prefix);
  return it != layers_.end() ? it->second : QuantScheme{group_size_, mode_};
}

}  // namespace heron::model
