// Dot products of rows, blocked for registers (kMr x kNr accumulators) and for L1 (K in
// chunks of at most kKc).
#include "heron/kernels/gemm_avx2.h"

#include <algorithm>
#include <cstdint>

#include "heron/kernels/avx2_util.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

constexpr int kMr = 3;    // rows of x per micro-kernel
constexpr int kNr = 4;    // weight rows per micro-kernel
constexpr int kKc = 512;  // most K per chunk

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

}  // namespace

void gemm_rows_avx2(const float* x, int M, int K, const float* w, int rows, float* out, int ldo) {
  // K in chunks so that the x rows and weight rows of one micro-kernel call
  // stay in L1 together.
  const int chunks = (K + kKc - 1) / kKc;
  const int step = ((K + chunks - 1) / chunks + 15) / 16 * 16;  // even chunks
  for (int k0 = 0; k0 < K; k0 += step) {
    const int kc = std::min(step, K - k0);
    for (int m = 0; m < M; m += kMr) {
      const int mr = std::min(kMr, M - m);
      const float* xr = x + int64_t{m} * K + k0;
      for (int j = 0; j < rows; j += kNr) {
        const int nr = std::min(kNr, rows - j);
        kMicro[mr - 1][nr - 1](xr, w + int64_t{j} * K + k0, K, kc, out + int64_t{m} * ldo + j, ldo,
                               k0 > 0);
      }
    }
  }
}

#else

void gemm_rows_avx2(const float*, int, int, const float*, int, float*, int) {}

#endif

}  // namespace heron::kernels
