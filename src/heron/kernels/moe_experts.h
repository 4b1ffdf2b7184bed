#pragma once
// A mixture's experts for a few tokens (decode) on the CPU in one node: for token t and
// each of its k experts e with weight w, out[t] += w * down_e(silu(gate_e(x_t)) * up_e(x_t)),
// the gate and up projections stacked in one tensor [E, 2I, H] (gate's I rows first) and
// down [E, H, I], each affine-quantized in qmm_cpu's forms. Two passes over the pool (the
// gated products, then the down products summed per token) where the composed graph takes
// about ten MLX operations per layer.
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

struct QuantizedExperts {
  mlx::core::array w, scales, biases;
  int group_size = 0, bits = 0;
};

// Whether moe_experts takes x [T, H] float32, experts [T, k] uint32 and weights [T, k]
// float32 with these projections on stream `s`.
bool moe_experts_supported(const mlx::core::array& x, const mlx::core::array& experts,
                           const mlx::core::array& weights, const QuantizedExperts& gate_up,
                           const QuantizedExperts& down, const mlx::core::Stream& s);
// -> [T, H] float32.
mlx::core::array moe_experts(const mlx::core::array& x, const mlx::core::array& experts,
                             const mlx::core::array& weights, const QuantizedExperts& gate_up,
                             const QuantizedExperts& down, mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
