#pragma once
// Streams MLX arrays into a safetensors blob one tensor at a time (each evaluated just
// before it is written), so a model larger than memory can be quantized.
#include <functional>
#include <string>
#include <vector>

#include <mlx/array.h>
#include <nlohmann/json.hpp>

#include "heron/store/store.h"

namespace heron::store {

struct NamedArray {
  std::string name;
  mlx::core::array array;
};

// Called after each tensor with its index (1-based) and the bytes written so far.
using TensorWritten = std::function<void(size_t done, uint64_t bytes)>;

// Header names are sorted; `metadata` goes under "__metadata__" (string values).
Layer write_safetensors(const Store& store, std::vector<NamedArray> tensors,
                        const nlohmann::json& metadata, const std::string& layer_name,
                        const TensorWritten& on_tensor);

// Bytes the tensors will occupy (for progress totals).
uint64_t tensor_bytes(const std::vector<NamedArray>& tensors);

}  // namespace heron::store
