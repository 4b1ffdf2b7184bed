#pragma once
// Products with float weights stored as Linear layers keep them, [N, K]: x · w^T.
// MLX's CPU backend runs float matmuls through the reference BLAS its wheel ships (a few
// GFLOP/s); float32 on the CPU with K a multiple of 8 runs our AVX2 kernel on all cores
// instead (gemm_avx2.h). Callers send everything else to mx::matmul.
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// Whether float_matmul takes x [..., K] and w [N, K] on stream `s`.
bool float_matmul_supported(const mlx::core::array& x, const mlx::core::array& w,
                            const mlx::core::Stream& s);
// x [..., K], w [N, K] -> [..., N], float32.
mlx::core::array float_matmul(const mlx::core::array& x, const mlx::core::array& w,
                              mlx::core::StreamOrDevice s = {});

// The kernel on raw row-major buffers (needs AVX2 and K % 8 == 0): out [M, N] = x [M, K] ·
// w [N, K]^T, on the calling thread and the shared pool.
void float_matmul_rows(const float* x, int M, int K, const float* w, int N, float* out);

}  // namespace heron::kernels
