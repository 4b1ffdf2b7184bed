#pragma once
// 4-bit affine-quantized matrix-vector product on NVIDIA tensor cores (sm_80 and
// later), compiled at run time through mx::fast::cuda_kernel. The warp kernel of
// qmv.h spends about three instructions per weight turning packed values into
// products; here two weights become a pair of 16-bit floats in three instructions
// and the tensor cores do the multiply-adds, in float32. Same semantics as
// mx::quantized_matmul(x, w, scales, biases, true, group_size, 4).
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels::cuda {

// Whether qmv_mma() takes these operands on stream `s`: a GPU of compute capability
// 8.0 or later, bf16 or fp16, 4 bits, groups of 32/64/128, K a multiple of 128, at
// most kMaxRows rows.
bool qmv_mma_supported(const mlx::core::array& x, const mlx::core::array& w,
                       const mlx::core::array& scales, const mlx::core::array& biases,
                       int group_size, int bits, const mlx::core::Stream& s);

// Whether this kernel pays for a weight this large (N*K of at least 16M values, e.g.
// every projection of Llama-3.1-8B): a custom kernel call costs more host time than
// an MLX op, which small models, bound by host time per token, feel.
bool qmv_mma_preferred(const mlx::core::array& w);

// x [..., K], w uint32 [N, K/8], scales/biases [N, K/group_size] -> [..., N].
mlx::core::array qmv_mma(const mlx::core::array& x, const mlx::core::array& w,
                         const mlx::core::array& scales, const mlx::core::array& biases,
                         int group_size, const mlx::core::Stream& s);

}  // namespace heron::kernels::cuda
