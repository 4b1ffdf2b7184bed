#pragma once
// Affine-quantized matmul with a fast CPU path: same semantics as
// mx::quantized_matmul(x, w, scales, biases, /*transpose=*/true, group_size,
// bits). MLX's CPU kernel for it is scalar (about 1 GMAC/s); this one uses
// AVX2 and all cores, for float32 x at 4, 5 or 8 bits with float32 scales. On NVIDIA
// GPUs, products of large weights with few rows (decode) run our CUDA kernel (cuda/qmv.h). Other
// devices, dtypes and shapes go to MLX unchanged, except groups of 16 (below MLX's smallest), which
// MLX dequantizes first.
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// x [..., K], w uint32 [N, K*bits/32], scales/biases [N, K/group_size] -> [..., N].
mlx::core::array quantized_matmul(const mlx::core::array& x, const mlx::core::array& w,
                                  const mlx::core::array& scales, const mlx::core::array& biases,
                                  int group_size, int bits, mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
