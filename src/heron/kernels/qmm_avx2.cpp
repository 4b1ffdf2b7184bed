// M > 1 (prefill): dequantize a tile of weight rows into a float buffer once,
// then run a register-blocked kernel over every row of x against it, so the
// unpacking cost is paid once per weight rather than once per (row, weight).
#include <algorithm>
#include <vector>

#include "heron/kernels/avx2_util.h"
#include "heron/kernels/gemm_avx2.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

constexpr int kTileRows = 32;  // weight rows per task; a multiple of the kernel's 4

// dst[r * K + k] = s * q + b for rows n0 .. n0 + rows, in the order of xp.
template <int BITS, int GS>
HERON_AVX2 void dequantize_tile(const QmmArgs& a, int n0, int rows, float* dst) {
  const int groups = a.K / GS;
  const int64_t row_bytes = int64_t{a.K} * BITS / 8;
  const auto* wbase = reinterpret_cast<const uint8_t*>(a.w);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* w = wbase + (n0 + r) * row_bytes;
    const float* s = group_params(a.scales, n0 + r, groups);
    const float* b = group_params(a.biases, n0 + r, groups);
    float* d = dst + int64_t{r} * a.K;
    for (int g = 0; g < groups; ++g) {
      const __m256 sv = _mm256_set1_ps(s[g]);
      const __m256 bv = _mm256_set1_ps(b[g]);
#pragma GCC unroll 8
      for (int blk = 0; blk < GS / 16; ++blk) {
        float* o = d + g * GS + blk * 16;
        __m256 lo, hi;
        unpack_block<BITS, GS>(w, g, blk, lo, hi);
        _mm256_storeu_ps(o, _mm256_fmadd_ps(lo, sv, bv));
        _mm256_storeu_ps(o + 8, _mm256_fmadd_ps(hi, sv, bv));
      }
    }
  }
}

using DequantFn = void (*)(const QmmArgs&, int, int, float*);

DequantFn pick(const QmmArgs& a) {
  return dispatch_qmm(a, [](auto bits, auto group) -> DequantFn {
    return dequantize_tile<decltype(bits)::value, decltype(group)::value>;
  });
}

void qmm_tile(const QmmArgs& a, const float* xp, int n0, DequantFn dequantize) {
  thread_local std::vector<float> tile;
  const int rows = std::min(kTileRows, a.N - n0);
  tile.resize(static_cast<size_t>(kTileRows) * a.K);
  dequantize(a, n0, rows, tile.data());
  gemm_rows_avx2(xp, a.M, a.K, tile.data(), rows, a.out + n0, a.N);
}

}  // namespace

void qmm_avx2(const QmmArgs& a, ThreadPool& pool) {
  thread_local std::vector<float> xbuf;
  const float* xp = a.x;
  if (a.bits == 4) {
    xbuf.resize(static_cast<size_t>(a.M) * a.K);
    permute_x_nibble_order(a.x, xbuf.data(), int64_t{a.M} * a.K);
    xp = xbuf.data();
  }
  const DequantFn dequantize = pick(a);
  const int tasks = (a.N + kTileRows - 1) / kTileRows;
  pool.parallel_for(tasks, [&](int t) { qmm_tile(a, xp, t * kTileRows, dequantize); });
}

#else

void qmm_avx2(const QmmArgs& a, ThreadPool& pool) {
  qmm_scalar(a, pool);
}

#endif

}  // namespace heron::kernels
