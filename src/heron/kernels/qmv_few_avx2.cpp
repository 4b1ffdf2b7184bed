// 2 <= M <= kFewRows (speculative verification: the current token and a few drafts):
// as the M == 1 kernel, each weight is unpacked once, in one pass, but multiplied into
// up to four rows of x at a time, so verifying a few positions reads and unpacks the
// weights about as often as decoding one. The tiled kernel (qmm_avx2) dequantizes
// every weight to memory first, which only pays for many rows.
#include <algorithm>
#include <vector>

#include "heron/kernels/avx2_util.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

// Weight row n against rows m0 .. m0 + MC of x: per group, s * dot(q, x_g) + b * sum(x_g).
template <int MC, int BITS, int GS>
HERON_AVX2 void few_row(const QmmArgs& a, const float* xp, const float* xsum, int n, int m0) {
  const int groups = a.K / GS;
  const uint8_t* w = reinterpret_cast<const uint8_t*>(a.w) + int64_t{n} * a.K * BITS / 8;
  const float* s = group_params(a.scales, n, groups);
  const float* b = group_params(a.biases, n, groups);
  const float* x[MC];
  const float* xs[MC];
  // Four lanes whatever MC is: the unused ones stay zero through the horizontal sums.
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  float bsum[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
  for (int m = 0; m < MC; ++m) {
    x[m] = xp + int64_t{m0 + m} * a.K;
    xs[m] = xsum + int64_t{m0 + m} * groups;
  }
  for (int g = 0; g < groups; ++g) {
    __m256 p[MC];
#pragma GCC unroll 4
    for (int m = 0; m < MC; ++m) p[m] = _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int blk = 0; blk < GS / 16; ++blk) {
      __m256 lo, hi;
      unpack_block<BITS, GS>(w, g, blk, lo, hi);
      const int k = g * GS + blk * 16;
#pragma GCC unroll 4
      for (int m = 0; m < MC; ++m) {
        p[m] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x[m] + k), p[m]);
        p[m] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x[m] + k + 8), p[m]);
      }
    }
    const __m256 sv = _mm256_set1_ps(s[g]);
    const float bias = b[g];
#pragma GCC unroll 4
    for (int m = 0; m < MC; ++m) {
      acc[m] = _mm256_fmadd_ps(sv, p[m], acc[m]);
      bsum[m] += bias * xs[m][g];
    }
  }
  const __m128 sums = _mm_add_ps(hsum4(acc[0], acc[1], acc[2], acc[3]), _mm_loadu_ps(bsum));
  alignas(16) float out[4];
  _mm_store_ps(out, sums);
#pragma GCC unroll 4
  for (int m = 0; m < MC; ++m) a.out[int64_t{m0 + m} * a.N + n] = out[m];
}

// Weight rows n0 .. n1 against every row of x, four rows of x at a time (the weight
// row stays in L1 between them).
template <int BITS, int GS>
HERON_AVX2 void few_range(const QmmArgs& a, const float* xp, const float* xsum, int n0, int n1) {
  for (int n = n0; n < n1; ++n) {
    int m = 0;
    for (; m + 4 <= a.M; m += 4) few_row<4, BITS, GS>(a, xp, xsum, n, m);
    switch (a.M - m) {
      case 3:
        few_row<3, BITS, GS>(a, xp, xsum, n, m);
        break;
      case 2:
        few_row<2, BITS, GS>(a, xp, xsum, n, m);
        break;
      case 1:
        few_row<1, BITS, GS>(a, xp, xsum, n, m);
        break;
      default:
        break;
    }
  }
}

using RangeFn = void (*)(const QmmArgs&, const float*, const float*, int, int);

RangeFn pick(const QmmArgs& a) {
  return dispatch_qmm(a, [](auto bits, auto group) -> RangeFn {
    return few_range<decltype(bits)::value, decltype(group)::value>;
  });
}

}  // namespace

void qmv_few_avx2(const QmmArgs& a, ThreadPool& pool) {
  // Per call: every row of x in the kernel's order, and its per-group sums.
  thread_local std::vector<float> xbuf, xsum;
  const int64_t values = int64_t{a.M} * a.K;
  const float* xp = a.x;
  if (a.bits == 4) {
    xbuf.resize(static_cast<size_t>(values));
    permute_x_nibble_order(a.x, xbuf.data(), values);
    xp = xbuf.data();
  }
  const int groups = a.K / a.group_size;
  xsum.resize(static_cast<size_t>(a.M) * groups);
  for (int64_t i = 0; i < int64_t{a.M} * groups; ++i) {
    float t = 0.0f;
    for (int j = 0; j < a.group_size; ++j) t += a.x[i * a.group_size + j];
    xsum[static_cast<size_t>(i)] = t;
  }
  // About 8 tasks per thread for balance.
  const int per_task = std::max(4, a.N / (8 * pool.size()));
  const int tasks = (a.N + per_task - 1) / per_task;
  const RangeFn fn = pick(a);
  const float* xs = xsum.data();
  pool.parallel_for(tasks,
                    [&](int t) { fn(a, xp, xs, t * per_task, std::min(a.N, (t + 1) * per_task)); });
}

#else

void qmv_few_avx2(const QmmArgs& a, ThreadPool& pool) {
  qmm_scalar(a, pool);
}

#endif

}  // namespace heron::kernels
