#pragma once
// Each row times the matrix of the expert its index names (mixtures of experts) on the
// CPU, through our kernels: out[r] = x[r] · W[indices[r]]^T for W stacked [experts, N, K],
// float32, affine-quantized in qmm_cpu's forms, or MXFP4. Rows go in runs of one expert, so
// indices sorted by expert (prefill) read each expert's weights once. MLX's gather_qmm
// and gather_mm run scalar or reference-BLAS code on the CPU, and refuse GGUF's groups of 16.
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// Whether gather_matmul takes these operands on stream `s`: x [..., 1, K] float32 whose
// batch dims broadcast to those of indices [...] (uint32), as mx::gather_mm's rhs_indices;
// w [E, N, K] float32 (no scales), or w [E, N, K*bits/32] uint32 with scales and biases
// [E, N, K/group] float32, or MLX's mxfp4 (group 32, bits 4): w [E, N, K/8] uint32 with
// uint8 E8M0 scales [E, N, K/32] and no biases (mxfp4_rows.h).
bool gather_matmul_supported(const mlx::core::array& x, const mlx::core::array& w,
                             const mlx::core::array* scales, const mlx::core::array* biases,
                             const mlx::core::array& indices, int group_size, int bits,
                             const mlx::core::Stream& s);
// -> [..., 1, N] float32 (indices' dims). An index past the last expert gives zeros.
mlx::core::array gather_matmul(const mlx::core::array& x, const mlx::core::array& w,
                               const mlx::core::array* scales, const mlx::core::array* biases,
                               const mlx::core::array& indices, int group_size, int bits,
                               mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
