// M == 1 (decode): every weight is used once, so unpack and multiply in one
// pass. Per group, sum_j (s*q_j + b) * x_j = s * dot(q, x_g) + b * sum(x_g):
// the inner loop is only unpack + FMA, the scale and bias apply once a group.
#include <algorithm>
#include <vector>

#include "heron/kernels/avx2_util.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

// NR weight rows at once: they share the loads of x and give the FMA units
// independent dependency chains.
template <int NR, int BITS, int GS>
HERON_AVX2 void qmv_rows(const QmmArgs& a, const float* xp, const float* xsum, int n0) {
  const int groups = a.K / GS;
  const int64_t row_bytes = int64_t{a.K} * BITS / 8;
  const auto* wbase = reinterpret_cast<const uint8_t*>(a.w);
  const uint8_t* w[NR];
  const float* s[NR];
  const float* b[NR];
  __m256 acc[4];
  float bsum[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) acc[r] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int r = 0; r < NR; ++r) {
    w[r] = wbase + (n0 + r) * row_bytes;
    s[r] = group_params(a.scales, n0 + r, groups);
    b[r] = group_params(a.biases, n0 + r, groups);
  }
  // The hardware prefetcher falls behind once weights spill out of L2: fetch
  // the rows two blocks ahead (contiguous with these) while working here.
  const int64_t gbytes = int64_t{NR} * GS * BITS / 8;
  const uint8_t* ahead = wbase + (n0 + 2 * NR) * row_bytes;
  for (int64_t off = 0; off < int64_t{NR} * groups * int64_t{sizeof(float)}; off += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(s[0] + 2 * NR * groups) + off, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b[0] + 2 * NR * groups) + off, _MM_HINT_T0);
  }
  for (int g = 0; g < groups; ++g) {
    for (int64_t off = 0; off < gbytes; off += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(ahead + g * gbytes + off), _MM_HINT_T0);
    }
    __m256 p0[NR], p1[NR];
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) p0[r] = p1[r] = _mm256_setzero_ps();
    const float* xg = xp + g * GS;
#pragma GCC unroll 8
    for (int blk = 0; blk < GS / 16; ++blk) {
      const __m256 x0 = _mm256_loadu_ps(xg + 16 * blk);
      const __m256 x1 = _mm256_loadu_ps(xg + 16 * blk + 8);
#pragma GCC unroll 4
      for (int r = 0; r < NR; ++r) {
        __m256 lo, hi;
        unpack_block<BITS, GS>(w[r], g, blk, lo, hi);
        p0[r] = _mm256_fmadd_ps(lo, x0, p0[r]);
        p1[r] = _mm256_fmadd_ps(hi, x1, p1[r]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) {
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(s[r][g]), _mm256_add_ps(p0[r], p1[r]), acc[r]);
      bsum[r] += b[r][g] * xsum[g];
    }
  }
  const __m128 sums = _mm_add_ps(hsum4(acc[0], acc[1], acc[2], acc[3]), _mm_loadu_ps(bsum));
  store_n(a.out + n0, sums, NR);
}

template <int BITS, int GS>
HERON_AVX2 void qmv_range(const QmmArgs& a, const float* xp, const float* xsum, int n0, int n1) {
  int n = n0;
  for (; n + 4 <= n1; n += 4) qmv_rows<4, BITS, GS>(a, xp, xsum, n);
  switch (n1 - n) {
    case 3:
      qmv_rows<3, BITS, GS>(a, xp, xsum, n);
      break;
    case 2:
      qmv_rows<2, BITS, GS>(a, xp, xsum, n);
      break;
    case 1:
      qmv_rows<1, BITS, GS>(a, xp, xsum, n);
      break;
    default:
      break;
  }
}

using RangeFn = void (*)(const QmmArgs&, const float*, const float*, int, int);

RangeFn pick(const QmmArgs& a) {
  return dispatch_qmm(a, [](auto bits, auto group) -> RangeFn {
    return qmv_range<decltype(bits)::value, decltype(group)::value>;
  });
}

}  // namespace

void qmv_avx2(const QmmArgs& a, ThreadPool& pool) {
  // Per call: x in the kernel's order and the per-group sums of x.
  thread_local std::vector<float> xbuf, xsum;
  const float* xp = a.x;
  if (a.bits == 4) {
    xbuf.resize(static_cast<size_t>(a.K));
    permute_x_nibble_order(a.x, xbuf.data(), a.K);
    xp = xbuf.data();
  }
  const int groups = a.K / a.group_size;
  xsum.resize(static_cast<size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    float t = 0.0f;
    for (int j = 0; j < a.group_size; ++j) t += a.x[g * a.group_size + j];
    xsum[static_cast<size_t>(g)] = t;
  }
  // About 8 tasks per thread for balance, in whole blocks of 4 rows.
  const int per_task = std::max(16, (a.N / (8 * pool.size()) + 3) / 4 * 4);
  const int tasks = (a.N + per_task - 1) / per_task;
  const RangeFn fn = pick(a);
  const float* xs = xsum.data();
  pool.parallel_for(tasks,
                    [&](int t) { fn(a, xp, xs, t * per_task, std::min(a.N, (t + 1) * per_task)); });
}

#else

void qmv_avx2(const QmmArgs& a, ThreadPool& pool) {
  qmm_scalar(a, pool);
}

#endif

}  // namespace heron::kernels
