#pragma once
// Device code of the warp-per-output-rows pattern of the decode products (passed as
// the `header` argument of mx::fast::cuda_kernel), and its host-side limits.

namespace heron::kernels::cuda {

// The most rows of x a decode product takes: decode steps of up to this many
// sequences or draft tokens. Longer inputs (prefill) are matrix products for MLX.
inline constexpr int kMaxRows = 8;

inline constexpr const char* kWarpRowsHelpers = R"(
// x[0..N) (16-bit floats, 16-byte aligned, N a multiple of 8) as floats.
template <typename T, int N>
__device__ inline void load_floats(const T* x, float* out) {
#pragma unroll
  for (int i = 0; i < N / 8; ++i) {
    const uint4 u = reinterpret_cast<const uint4*>(x)[i];
    const T* v = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int j = 0; j < 8; ++j) out[i * 8 + j] = static_cast<float>(v[j]);
  }
}

// Each lane holds partial sums acc[m][r] of output (m, n0 + r); lane 0 writes the
// warp's totals for the rows that exist.
template <typename T, int ROWS, int R>
__device__ inline void store_warp_sums(float (&acc)[ROWS][R], T* out, int rows, int N, int n0) {
#pragma unroll
  for (int m = 0; m < ROWS; ++m) {
    if (m >= rows) break;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float v = acc[m][r];
#pragma unroll
      for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (threadIdx.x % 32 == 0 && n0 + r < N) out[size_t(m) * N + n0 + r] = static_cast<T>(v);
    }
  }
}
)";

// The smallest of 1, 2, 4, 8 that holds `rows` (the kernels' register tile).
inline int row_tile(int rows) {
  return rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : 8;
}

}  // namespace heron::kernels::cuda
