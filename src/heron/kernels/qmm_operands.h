#pragma once
// The operand shapes an affine-quantized matmul kernel of ours takes (device and
// dtypes are each kernel's own business): 4, 5 or 8 bits, groups of 16/32/64/128 (16:
// the GGUF K types whose sub-blocks are 16 long),
// x [..., K], w uint32 [N, K*bits/32], scales and biases [N, K/group_size]; and the
// stacked experts of a mixture.
#include <cstdint>

#include <mlx/array.h>

namespace heron::kernels {

// The widths and groups the kernels take.
inline bool affine_qmm_form(int group_size, int bits) {
  return (bits == 4 || bits == 5 || bits == 8) &&
         (group_size == 16 || group_size == 32 || group_size == 64 || group_size == 128);
}

inline bool affine_qmm_shapes(const mlx::core::array& x, const mlx::core::array& w,
                              const mlx::core::array& scales, const mlx::core::array& biases,
                              int group_size, int bits) {
  if (!affine_qmm_form(group_size, bits)) return false;
  if (x.ndim() < 1 || w.ndim() != 2 || scales.ndim() != 2 || scales.shape() != biases.shape()) {
    return false;
  }
  const int64_t K = int64_t{w.shape(1)} * 32 / bits;
  return K > 0 && x.shape(-1) == K && K % group_size == 0 && scales.shape(0) == w.shape(0) &&
         scales.shape(1) == K / group_size;
}

// A mixture's stacked experts with N output rows and K inputs each: w uint32
// [E, N, K*bits/32], scales and biases float32 [E, N, K/group_size].
inline bool affine_expert_shapes(const mlx::core::array& w, const mlx::core::array& scales,
                                 const mlx::core::array& biases, int N, int K, int group_size,
                                 int bits) {
  return affine_qmm_form(group_size, bits) && w.dtype() == mlx::core::uint32 &&
         scales.dtype() == mlx::core::float32 && biases.dtype() == mlx::core::float32 &&
         w.ndim() == 3 && scales.ndim() == 3 && scales.shape() == biases.shape() && K > 0 &&
         w.shape(1) == N && int64_t{w.shape(2)} * 32 == int64_t{K} * bits && K % group_size == 0 &&
         scales.shape(0) == w.shape(0) && scales.shape(1) == N && scales.shape(2) == K / group_size;
}

}  // namespace heron::kernels
