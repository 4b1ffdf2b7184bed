#pragma once
// gpt-oss's experts as OpenAI's checkpoints hold them, rewritten into mlx-lm's layout.
// Each layer has
//   P.gate_up_proj_blocks  uint8 [E, 2I, H/32, 16]  MXFP4 values, two a byte, low first
//   P.gate_up_proj_scales  uint8 [E, 2I, H/32]      E8M0 exponents, one per 32 values
//   P.gate_up_proj_bias    [E, 2I]
//   P.down_proj_blocks / P.down_proj_scales / P.down_proj_bias
// (P = model.layers.N.mlp.experts), gate and up rows interleaved (gate 2i, up 2i+1); a
// float checkpoint holds P.gate_up_proj [E, H, 2I] and P.down_proj [E, I, H] instead
// (transposed, as transformers multiplies them). Both become P.gate_proj, P.up_proj and
// P.down_proj with .weight ([E, out, in] float, or uint32 [E, out, in/8] with .scales:
// MLX's mxfp4 packing, the same bytes) and .bias. Other weights pass through.
//
// Qwen3.5's mixtures fuse them another way: P.gate_up_proj [E, 2I, H] holds gate's rows
// then up's, as a linear layer's weight, and P.down_proj [E, H, I]; no biases. They
// become mlx-lm's M.switch_mlp.{gate,up,down}_proj.weight (M = model.layers.N.mlp).
#include "heron/io/weights.h"

namespace heron::io {

enum class FusedExperts {
  Interleaved,  // gpt-oss
  Halves,       // Qwen3.5's mixtures
};

// Whether `weights` hold experts in a fused layout.
bool has_fused_experts(const WeightMap& weights);
// The layout a model of this architecture (config.json's model_type) fuses them in.
FusedExperts fused_experts_of(const std::string& architecture);
// Tensors of a shape that layout does not allow are an error naming `source`.
WeightMap with_unfused_experts(WeightMap weights, const std::string& source,
                               FusedExperts layout = FusedExperts::Interleaved);

}  // namespace heron::io
