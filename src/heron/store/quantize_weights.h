#pragma once
// A model's tensors as create stores them: each one kept or quantized as plan_tensor
// says, under the store's name prefix. Nothing is computed here; every output array is
// a lazy MLX graph on its source tensor, evaluated by write_safetensors just before it
// is written, so one tensor at a time is in memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mlx/dtype.h>
#include <nlohmann/json.hpp>

#include "heron/io/weights.h"
#include "heron/store/quantize_plan.h"
#include "heron/store/safetensors_writer.h"

namespace heron::store {

struct PlannedTensors {
  std::vector<NamedArray> tensors;
  nlohmann::json quantization;  // mlx-lm's "quantization" section (null when not quantized)
  uint64_t params = 0;          // elements of the source tensors
  std::optional<mlx::core::Dtype> float_type;  // of the first floating source tensor
};

// `weights` use Hugging Face names (the plan looks at lm_head, embed_tokens, k_proj...).
PlannedTensors plan_weights(io::WeightMap weights, const std::optional<QuantType>& q,
                            bool tied_embeddings, const std::string& prefix);

}  // namespace heron::store
