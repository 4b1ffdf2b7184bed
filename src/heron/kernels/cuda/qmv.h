#pragma once
// Affine-quantized matrix-vector product on NVIDIA GPUs, a kernel of ours compiled at
// run time through mx::fast::cuda_kernel. Decode reads every weight once per token, so
// this product bounds decode speed; MLX 0.32's CUDA qmv reached about 17% of the
// memory bandwidth on Llama-3.1-8B 4-bit. Same semantics as
// mx::quantized_matmul(x, w, scales, biases, true, group_size, bits).
#include <mlx/array.h>
#include <mlx/utils.h>

#include "heron/kernels/cuda/device_helpers.h"

namespace heron::kernels::cuda {

// Whether qmv() takes these operands on stream `s` (a GPU stream, 16-bit floats,
// 4 or 8 bits, groups of 32/64/128, at most kMaxRows rows).
bool qmv_supported(const mlx::core::array& x, const mlx::core::array& w,
                   const mlx::core::array& scales, const mlx::core::array& biases, int group_size,
                   int bits, const mlx::core::Stream& s);

// Whether our kernel pays for a weight this large (N*K of at least 32M values, e.g.
// Llama-3.1-8B's gate/up, down and output head): on an H200 it read such weights at
// 1.1-1.9 TB/s against MLX's 0.8-1.0, but each call costs more host time than
// MLX's, which small models, bound by host time per token, felt.
bool qmv_preferred(const mlx::core::array& w, int bits);

// x [..., K], w uint32 [N, K*bits/32], scales/biases [N, K/group_size] -> [..., N].
// Each warp computes `rows_per_warp` outputs (a tuning knob for the benchmark).
mlx::core::array qmv(const mlx::core::array& x, const mlx::core::array& w,
                     const mlx::core::array& scales, const mlx::core::array& biases, int group_size,
                     int bits, const mlx::core::Stream& s, int rows_per_warp = 2);

}  // namespace heron::kernels::cuda
