#pragma once
// Experts stored one per layer (Hugging Face: P.experts.E.NAME.weight) joined into one
// tensor per projection (P.switch_mlp.NAME.weight, [experts, out, in]), as mlx-lm stores
// them: create then quantizes each projection of all experts as one 3-D tensor, and
// mlx-lm reads the stored model. Float experts only (an already quantized expert keeps its
// layout); the join is a lazy MLX graph, evaluated when written, like every stored tensor.
#include "heron/io/weights.h"

namespace heron::store {

io::WeightMap with_stacked_experts(io::WeightMap weights);

}  // namespace heron::store
