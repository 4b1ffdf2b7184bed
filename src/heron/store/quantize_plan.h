#pragma once
// Which tensors `create --quantize` quantizes, and how. mlx-lm's layout: a quantized
// layer P stores P.weight (uint32), P.scales and, for affine, P.biases; config.json's
// "quantization" section holds the default and per-layer overrides.
//
// Kept at source precision: anything but a 2-D ".weight" (or experts' stacked 3-D
// ".switch_mlp." ones), norms, MoE routers, and
// tensors whose input width is not a multiple of the group size. The output head
// (lm_head, or the embedding when tied) goes to 8 bits; at int4 so do k_proj, v_proj
// and down_proj.
#include <optional>
#include <string>

#include <mlx/array.h>
#include <nlohmann/json.hpp>

namespace heron::store {

struct QuantType {
  std::string label;  // "int4", "int8", "mxfp4", "mxfp8", "nvfp4"
  std::string mode;   // MLX mode: affine, mxfp4, mxfp8, nvfp4
  int bits = 0;
  int group_size = 0;

  // "int4"/"q4", "int8"/"q8", "mxfp4", "mxfp8", "nvfp4"; anything else throws heron::Error.
  static QuantType parse(const std::string& text);
  bool operator==(const QuantType&) const = default;
};

// How one tensor is stored: nullopt keeps it as it is.
std::optional<QuantType> plan_tensor(const std::string& name, const mlx::core::array& tensor,
                                     const QuantType& q, bool tied_embeddings);

// mlx-lm's "quantization" entry for a layer: {"group_size", "bits", "mode"}.
nlohmann::json quant_entry(const QuantType& q);

}  // namespace heron::store
