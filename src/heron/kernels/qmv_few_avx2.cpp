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

// Weight rows n .. n + NR against rows m0 .. m0 + MC of x: per group,
// s * dot(q, x_g) + b * sum(x_g). Each (weight row, x row) pair keeps two partial sums
// (the block's low and high halves), so 2 * NR * MC FMA chains run side by side: with
// one chain per pair the kernel waited on FMA latency, not on the weights.
template <int NR, int MC, int BITS, int GS>
HERON_AVX2 void few_rows(const QmmArgs& a, const float* xp, const float* xsum, int n, int m0) {
  static_assert(NR * MC <= 4, "four sums per horizontal add");
  const int groups = a.K / GS;
  const int64_t row_bytes = int64_t{a.K} * BITS / 8;
  const auto* wbase = reinterpret_cast<const uint8_t*>(a.w);
  const uint8_t* w[NR];
  const float* s[NR];
  const float* b[NR];
#pragma GCC unroll 2
  for (int r = 0; r < NR; ++r) {
    w[r] = wbase + (n + r) * row_bytes;
    s[r] = group_params(a.scales, n + r, groups);
    b[r] = group_params(a.biases, n + r, groups);
  }
  const float* x[MC];
  const float* xs[MC];
#pragma GCC unroll 4
  for (int m = 0; m < MC; ++m) {
    x[m] = xp + int64_t{m0 + m} * a.K;
    xs[m] = xsum + int64_t{m0 + m} * groups;
  }
  // Four lanes whatever NR * MC is: the unused ones stay zero through the horizontal sums.
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  float bsum[4] = {0, 0, 0, 0};
  // As the one-row kernel: fetch the weight rows two steps ahead while working here.
  const int64_t gbytes = int64_t{NR} * GS * BITS / 8;
  const uint8_t* ahead = wbase + (n + 2 * NR) * row_bytes;
  for (int g = 0; g < groups; ++g) {
    for (int64_t off = 0; off < gbytes; off += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(ahead + g * gbytes + off), _MM_HINT_T0);
    }
    __m256 p0[NR * MC], p1[NR * MC];
#pragma GCC unroll 4
    for (int i = 0; i < NR * MC; ++i) p0[i] = p1[i] = _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int blk = 0; blk < GS / 16; ++blk) {
      const int k = g * GS + blk * 16;
#pragma GCC unroll 2
      for (int r = 0; r < NR; ++r) {
        __m256 lo, hi;
        unpack_block<BITS, GS>(w[r], g, blk, lo, hi);
#pragma GCC unroll 4
        for (int m = 0; m < MC; ++m) {
          p0[r * MC + m] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x[m] + k), p0[r * MC + m]);
          p1[r * MC + m] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x[m] + k + 8), p1[r * MC + m]);
        }
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < NR; ++r) {
      const __m256 sv = _mm256_set1_ps(s[r][g]);
      const float bias = b[r][g];
#pragma GCC unroll 4
      for (int m = 0; m < MC; ++m) {
        const int i = r * MC + m;
        acc[i] = _mm256_fmadd_ps(sv, _mm256_add_ps(p0[i], p1[i]), acc[i]);
        bsum[i] += bias * xs[m][g];
      }
    }
  }
  const __m128 sums = _mm_add_ps(hsum4(acc[0], acc[1], acc[2], acc[3]), _mm_loadu_ps(bsum));
  alignas(16) float out[4];
  _mm_store_ps(out, sums);
#pragma GCC unroll 2
  for (int r = 0; r < NR; ++r) {
#pragma GCC unroll 4
    for (int m = 0; m < MC; ++m) a.out[int64_t{m0 + m} * a.N + n + r] = out[r * MC + m];
  }
}

// Weight rows n0 .. n1 against rows m0 .. m0 + MC of x: two weight rows at a time when
// MC <= 2 (enough chains), else one.
template <int MC, int BITS, int GS>
HERON_AVX2 void few_columns(const QmmArgs& a, const float* xp, const float* xsum, int n0, int n1,
                            int m0) {
  int n = n0;
  if constexpr (MC <= 2) {
    for (; n + 2 <= n1; n += 2) few_rows<2, MC, BITS, GS>(a, xp, xsum, n, m0);
  }
  for (; n < n1; ++n) few_rows<1, MC, BITS, GS>(a, xp, xsum, n, m0);
}

// Weight rows n0 .. n1 against every row of x, four rows of x at a time.
template <int BITS, int GS>
HERON_AVX2 void few_range(const QmmArgs& a, const float* xp, const float* xsum, int n0, int n1) {
  int m = 0;
  for (; m + 4 <= a.M; m += 4) few_columns<4, BITS, GS>(a, xp, xsum, n0, n1, m);
  switch (a.M - m) {
    case 3:
      few_columns<3, BITS, GS>(a, xp, xsum, n0, n1, m);
      break;
    case 2:
      few_columns<2, BITS, GS>(a, xp, xsum, n0, n1, m);
      break;
    case 1:
      few_columns<1, BITS, GS>(a, xp, xsum, n0, n1, m);
      break;
    default:
      break;
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
  const int per_task = std::max(4, (a.N / (8 * pool.size()) + 1) / 2 * 2);  // pairs of rows
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
