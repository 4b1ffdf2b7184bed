#pragma once
// A multimodal checkpoint's language model under the names text-only models use. Qwen3.5
// ships as one: Hugging Face's model.language_model.* (beside model.visual.*), mlx-lm's
// language_model.model.* and language_model.lm_head.*. These become model.* and lm_head.*;
// the vision tower's tensors are dropped. Other names pass through.
#include <string>

#include "heron/io/weights.h"

namespace heron::io {

// One tensor's or module's name.
std::string text_model_name(const std::string& name);
WeightMap with_text_model_names(WeightMap weights);

}  // namespace heron::io
