#pragma once
// What create changes so that mlx-lm reads the stored model as its source meant, where
// mlx-lm tells layouts apart by what create changed:
// - a multimodal checkpoint's language model (Qwen3.5: model.language_model.*, lm_head.*)
//   is stored under mlx-lm's module paths (language_model.model.*,
//   language_model.lm_head.*), so the quantization section's per-layer entries name
//   mlx-lm's modules; the vision tower's tensors are left out (a text runner's store);
// - Qwen3-Next in the Hugging Face layout, whose experts create stacks, is stored as
//   mlx-lm's sanitized files hold it (mlx-lm converts the rest of the layout only while
//   the experts are apart): RMSNorm weights as 1 + w, the convolution as
//   [channels, kernel, 1].
#include <nlohmann/json.hpp>

#include "heron/io/weights.h"

namespace heron::store {

io::WeightMap in_mlx_lm_layout(io::WeightMap weights, const nlohmann::json& config);

}  // namespace heron::store
