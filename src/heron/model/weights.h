#pragma once
// Named weights of one model, consumed by the layers that need them. A missing
// name is a clear error naming the model file, never a crash.
#include <optional>
#include <string>

#include "heron/io/weights.h"
#include "heron/model/config.h"

namespace heron::model {

class Weights {
 public:
  Weights(io::WeightMap map, std::string source, int group_size, mlx::core::Dtype dtype)
      : map_(std::move(map)), source_(std::move(source)), group_size_(group_size), dtype_(dtype) {}

  mlx::core::array take(const std::string& name);
  std::optional<mlx::core::array> take_optional(const std::string& name);
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  // The tensor under `name`, left in place; null when absent.
  const mlx::core::array* find(const std::string& name) const {
    auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
  }
  // Adds (or replaces) a tensor: a layout rewritten at load, for its layer to take.
  void put(const std::string& name, mlx::core::array a) {
    map_.insert_or_assign(name, std::move(a));
  }
  const std::string& source() const { return source_; }
  int group_size() const { return group_size_; }
  // Quantization of the layer at `prefix`: a per-layer override, else the default.
  QuantScheme quant_scheme(const std::string& prefix) const;
  void set_quant_schemes(std::string default_mode, std::map<std::string, QuantScheme> layers) {
    mode_ = std::move(default_mode);
    layers_ = std::move(layers);
  }
  // Activations and float weights are computed in this type.
  mlx::core::Dtype dtype() const { return dtype_; }

 private:
  io::WeightMap map_;
  std::string source_;
  int group_size_;
  std::string mode_ = "affine";
  std::map<std::string, QuantScheme> layers_;
  mlx::core::Dtype dtype_;
};

}  // namespace heron::model
