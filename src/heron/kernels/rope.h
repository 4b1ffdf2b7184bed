#pragma once
// Rotary position embedding with a fused CPU path: the semantics of mx::fast::rope with
// per-row offsets. On the CPU MLX composes it from some thirty graph nodes (positions,
// frequencies, cos, sin, slices, products, a concatenation), and a decode step runs it
// twice a layer; this is one node. Other devices and dtypes go to MLX unchanged.
#include <memory>
#include <optional>

#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// Built once per model (the inverse frequencies are computed here, not per call).
class Rotary {
 public:
  // Inverse frequency i is base^(-2i/dims), or 1 / freqs[i] (float32 [dims/2]) when
  // freqs is given (exactly one of the two); positions are multiplied by scale.
  // traditional: rotate pairs (2i, 2i+1) rather than (i, i + dims/2). Features past
  // dims pass through.
  Rotary(int dims, bool traditional, std::optional<float> base,
         std::optional<mlx::core::array> freqs, float scale);
  // x [B, H, L, D] (or [B, L, D]); offsets int32 [B] or a scalar: row b's first position.
  mlx::core::array operator()(const mlx::core::array& x, const mlx::core::array& offsets,
                              mlx::core::StreamOrDevice s = {}) const;

  struct Table;

 private:
  int dims_;
  bool traditional_;
  std::optional<float> base_;
  std::optional<mlx::core::array> freqs_;
  float scale_;
  std::shared_ptr<const Table> table_;
};

}  // namespace heron::kernels
