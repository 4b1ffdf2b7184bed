// M > 1 (prefill): dequantize a tile of weight rows into a float buffer once,
// then run a register-blocked kernel over every row of x against it, so the
// unpacking cost is paid once per weight rather than once per (row, weight).
#include <algorithm>
#include <vector>

#include "heron/kernels/avx2_util.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

constexpr int kTileRows = 32;  // weight rows per task; a multiple of the kernel's 4
constexpr int kMr = 3;         // rows of x per micro-kernel
constexpr int kNr = 4;         // weight rows per micro-kernel
constexpr int kKc = 512;       // most K per chunk

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

// out[i * ldo + j] (+)= dot(x row i, w row j) over kc values; rows are ld apart.
template <int MR, int NR>
HERON_AVX2 void micro(const float* x, const float* w, int ld, int kc, float* out, int ldo,
                      bool add) {
  __m256 acc[MR][4];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = _mm256_setzero_ps();
  }
  for (int k = 0; k < kc; k += 8) {
    __m256 xv[MR];
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) xv[i] = _mm256_loadu_ps(x + int64_t{i} * ld + k);
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) {
      const __m256 wv = _mm256_loadu_ps(w + int64_t{j} * ld + k);
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_fmadd_ps(xv[i], wv, acc[i][j]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
    float* o = out + int64_t{i} * ldo;
    __m128 v = hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    if (add) {
      alignas(16) float prev[4] = {0, 0, 0, 0};
      for (int j = 0; j < NR; ++j) prev[j] = o[j];
      v = _mm_add_ps(v, _mm_load_ps(prev));
    }
    store_n(o, v, NR);
  }
}

using MicroFn = void (*)(const float*, const float*, int, int, float*, int, bool);
constexpr MicroFn kMicro[kMr][kNr] = {{micro<1, 1>, micro<1, 2>, micro<1, 3>, micro<1, 4>},
                                      {micro<2, 1>, micro<2, 2>, micro<2, 3>, micro<2, 4>},
                                      {micro<3, 1>, micro<3, 2>, micro<3, 3>, micro<3, 4>}};

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
  // K in chunks so that the x rows and weight rows of one micro-kernel call
  // stay in L1 together.
  const int chunks = (a.K + kKc - 1) / kKc;
  const int step = ((a.K + chunks - 1) / chunks + 15) / 16 * 16;  // even chunks
  for (int k0 = 0; k0 < a.K; k0 += step) {
    const int kc = std::min(step, a.K - k0);
    for (int m = 0; m < a.M; m += kMr) {
      const int mr = std::min(kMr, a.M - m);
      const float* x = xp + int64_t{m} * a.K + k0;
      for (int j = 0; j < rows; j += kNr) {
        const int nr = std::min(kNr, rows - j);
        kMicro[mr - 1][nr - 1](x, tile.data() + int64_t{j} * a.K + k0, a.K, kc,
                               a.out + int64_t{m} * a.N + n0 + j, a.N, k0 > 0);
      }
    }
  }
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
