#include "heron/kernels/cuda/qmv.h"

#include <mlx/fast.h>
#include <mlx/ops.h>

#include "heron/kernels/qmm_operands.h"

namespace heron::kernels::cuda {

namespace mx = mlx::core;

namespace {

// One warp computes R outputs for every row of x. Each lane reads 16 bytes of a
// weight row at a time (32 4-bit or 16 8-bit values, all in one quantization group),
// so a warp reads 512 contiguous bytes per row and step; the x values it needs are
// read once and used for all R rows.
// Turning q into a float costs no conversion instruction: q shifted under the
// exponent of 1.0 is f = 1 + q / 2^BITS (a shift, a mask and an or), so
// sum(q*x) = 2^BITS * (sum(f*x) - sum(x)), and with w = s*q + b per group
// sum(w*x) = s' * sum(f*x) + (b - s') * sum(x), s' = s * 2^BITS, in float. The
// subtraction loses at most a bit or two of float's 24: f is between 1 and 2.
constexpr const char* kSource = R"(
  constexpr int kVals = 128 / BITS;
  constexpr int kPerWord = 32 / BITS;
  constexpr unsigned kMask = (1u << BITS) - 1u;
  constexpr int kTop = 23 - BITS;  // where q's bits go: the mantissa's top
  const int K = x_shape[x_ndim - 1];
  int rows = 1;
  for (int i = 0; i + 1 < x_ndim; ++i) rows *= x_shape[i];
  const int N = w_shape[0];
  const int chunks = K / kVals;
  const int groups = K / GROUP;
  const int lane = threadIdx.x % 32;
  const int n0 = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * R;
  if (n0 >= N) return;
  const uint4* wq = reinterpret_cast<const uint4*>(w);
  float acc[ROWS][R] = {};
#pragma unroll 2
  for (int c = lane; c < chunks; c += 32) {
    uint4 q[R];
    float s[R], b[R];
    const int g = c * kVals / GROUP;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const size_t n = min(n0 + r, N - 1);
      q[r] = wq[n * chunks + c];
      s[r] = static_cast<float>(scales[n * groups + g]) * (1 << BITS);
      b[r] = static_cast<float>(biases[n * groups + g]) - s[r];
    }
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
      if (m >= rows) break;
      float xs[kVals];
      load_floats<T, kVals>(x + size_t(m) * K + size_t(c) * kVals, xs);
      float xsum = 0.0f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) xsum += xs[i];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const uint32_t words[4] = {q[r].x, q[r].y, q[r].z, q[r].w};
        float fx = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < kPerWord; ++j) {
            const int shift = kTop - BITS * j;
            const uint32_t bits = shift >= 0 ? words[i] << shift : words[i] >> -shift;
            fx += __uint_as_float(0x3f800000u | (bits & (kMask << kTop))) * xs[i * kPerWord + j];
          }
        }
        acc[m][r] += s[r] * fx + b[r] * xsum;
      }
    }
  }
  store_warp_sums<T, ROWS, R>(acc, out, rows, N, n0);
)";

constexpr int kThreads = 256;

const mx::fast::CustomKernelFunction& kernel() {
  static const auto k = mx::fast::cuda_kernel("heron_qmv", {"x", "w", "scales", "biases"}, {"out"},
                                              kSource, kWarpRowsHelpers);
  return k;
}

}  // namespace

bool qmv_supported(const mx::array& x, const mx::array& w, const mx::array& scales,
                   const mx::array& biases, int group_size, int bits, const mx::Stream& s) {
  if (s.device != mx::Device::gpu) return false;
  if (x.dtype() != mx::bfloat16 && x.dtype() != mx::float16) return false;
  if (scales.dtype() != x.dtype() || biases.dtype() != x.dtype() || w.dtype() != mx::uint32) {
    return false;
  }
  // A thread reads 32 4-bit or 16 8-bit values under one scale (5 bits: MLX's kernel).
  if (bits == 5 || group_size < 32 || !affine_qmm_shapes(x, w, scales, biases, group_size, bits)) return false;
  const int64_t K = x.shape(-1);
  const auto rows = static_cast<int64_t>(x.size()) / K;
  return rows >= 1 && rows <= kMaxRows;
}

bool qmv_preferred(const mx::array& w, int bits) {
  const int64_t values = int64_t{w.shape(0)} * w.shape(1) * (32 / bits);
  return values >= (int64_t{32} << 20);
}

mx::array qmv(const mx::array& x, const mx::array& w, const mx::array& scales,
              const mx::array& biases, int group_size, int bits, const mx::Stream& s,
              int rows_per_warp) {
  const int K = x.shape(-1);
  const int N = w.shape(0);
  const int rows = static_cast<int>(x.size() / K);
  const int warps = (N + rows_per_warp - 1) / rows_per_warp;
  auto shape = x.shape();
  shape.back() = N;
  return kernel()({x, w, scales, biases}, {std::move(shape)}, {x.dtype()}, {warps * 32, 1, 1},
                  {kThreads, 1, 1},
                  {{"T", x.dtype()},
                   {"BITS", bits},
                   {"GROUP", group_size},
                   {"R", rows_per_warp},
                   {"ROWS", row_tile(rows)}},
                  std::nullopt, false, s)[0];
}

}  // namespace heron::kernels::cuda
