#pragma once
// Affine-quantized matrix-vector product on NVIDIA GPUs, a kernel of ours compiled at
// run time through mx::fast::cuda_kernel. Decode reads every weight once per token, so
// this product bounds decode speed; MLX 0.32's CUDA qmv reached about 17% of the
// memory bandwidth on Llama-3.1-8B 4-bit. Same semantics as
// mx::quantized_matmul(x, w, scales, biases, true, group_size, bits).
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels::cuda {

// The most rows of x one call takes: decode steps of up to this many sequences or
// draft tokens. Longer inputs (prefill) are matrix products and stay with MLX.
inline constexpr int kQmvMaxRows = 8;

// Whether qmv() takes these operands on stream `s` (a GPU stream, 16-bit floats,
// 4 or 8 bits, groups of 32/64/128, at most kQmvMaxRows rows).
bool qmv_supported(const mlx::core::array& x, const mlx::core::array& w,
                   const mlx::core::array& scales, const mlx::core::array& biases, int group_size,
                   int bits, const mlx::core::Stream& s);

// x [..., K], w uint32 [N, K*bits/32], scales/biases [N, K/group_size] -> [..., N].
// Each warp computes `rows_per_warp` outputs (a tuning knob for the benchmark).
mlx::core::array qmv(const mlx::core::array& x, const mlx::core::array& w,
                     const mlx::core::array& scales, const mlx::core::array& biases, int group_size,
                     int bits, const mlx::core::Stream& s, int rows_per_warp = 4);

}  // namespace heron::kernels::cuda
