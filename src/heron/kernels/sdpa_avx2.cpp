// The attention inner loop in blocks of kBk keys: scores for every row of the
// tile (register-blocked dot products), the online-softmax update, then
// probabilities times values. Each key/value block is read once per tile and
// reused by all its rows (query positions of all heads sharing the kv head).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "heron/kernels/avx2_exp.h"
#include "heron/kernels/avx2_util.h"
#include "heron/kernels/sdpa_kernels.h"

namespace heron::kernels {

#if defined(__x86_64__)

namespace {

using namespace avx2;

// Keys per block: the tile's scores (rows x kBk) and the block's keys and
// values stay in L1/L2 between the three passes.
constexpr int kBk = 64;

// s[r * kBk + j] = q_r . k_j for R rows and keys j < n. Four keys at a time
// share each load of q and give 4R independent FMA chains.
template <int R>
HERON_AVX2 void scores(const float* q, int D, const float* k, int64_t ks, int n, float* s) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* kj = k + j * ks;
    __m256 acc[R][4];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = _mm256_setzero_ps();
    for (int d = 0; d < D; d += 8) {
      const __m256 k0 = _mm256_loadu_ps(kj + d);
      const __m256 k1 = _mm256_loadu_ps(kj + ks + d);
      const __m256 k2 = _mm256_loadu_ps(kj + 2 * ks + d);
      const __m256 k3 = _mm256_loadu_ps(kj + 3 * ks + d);
#pragma GCC unroll 2
      for (int r = 0; r < R; ++r) {
        const __m256 qv = _mm256_loadu_ps(q + r * D + d);
        acc[r][0] = _mm256_fmadd_ps(qv, k0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(qv, k1, acc[r][1]);
        acc[r][2] = _mm256_fmadd_ps(qv, k2, acc[r][2]);
        acc[r][3] = _mm256_fmadd_ps(qv, k3, acc[r][3]);
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      _mm_storeu_ps(s + r * kBk + j, hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
    }
  }
  for (; j < n; ++j) {
    const float* kj = k + j * ks;
    __m256 acc[R];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int d = 0; d < D; d += 8) {
      const __m256 kv = _mm256_loadu_ps(kj + d);
#pragma GCC unroll 2
      for (int r = 0; r < R; ++r) {
        acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * D + d), kv, acc[r]);
      }
    }
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) s[r * kBk + j] = hsum(acc[r]);
  }
}

// acc[r][c0 .. c0 + 8NC) += sum_{j < n} p[r * kBk + j] * v_j[c0 ..], for R
// rows: each value load feeds R FMAs, each broadcast of p feeds NC.
template <int R, int NC>
HERON_AVX2 void weighted_values(const float* p, int n, const float* v, int64_t vs, int c0,
                                float* acc, int D) {
  __m256 a[R][NC];
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) a[r][c] = _mm256_loadu_ps(acc + r * D + c0 + 8 * c);
  }
  for (int j = 0; j < n; ++j) {
    const float* vj = v + j * vs + c0;
    __m256 vv[NC];
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) vv[c] = _mm256_loadu_ps(vj + 8 * c);
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const __m256 pr = _mm256_broadcast_ss(p + r * kBk + j);
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c) a[r][c] = _mm256_fmadd_ps(pr, vv[c], a[r][c]);
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) _mm256_storeu_ps(acc + r * D + c0 + 8 * c, a[r][c]);
  }
}

template <int R>
HERON_AVX2 void weighted_values_rows(const float* p, int n, const float* v, int64_t vs, float* acc,
                                     int D) {
  int c = 0;
  for (; c + 32 <= D; c += 32) weighted_values<R, 4>(p, n, v, vs, c, acc, D);
  for (; c < D; c += 8) weighted_values<R, 1>(p, n, v, vs, c, acc, D);
}

// Turns one row of scores (n visible of npad) into probabilities under the
// updated running max, and returns the factor that rescales what was
// accumulated under the old max.
HERON_AVX2 float softmax_row(float* s, int n, int npad, float& m, float& l) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int j = n; j < npad; ++j) s[j] = -kInf;
  __m256 mv = _mm256_set1_ps(-kInf);
  for (int j = 0; j < npad; j += 8) mv = _mm256_max_ps(mv, _mm256_loadu_ps(s + j));
  const float m_new = std::max(m, hmax(mv));
  if (m_new == -kInf) {  // masked: the row has seen no key yet, and sees none here
    std::fill(s, s + npad, 0.0f);
    return 1.0f;
  }
  const __m256 mb = _mm256_set1_ps(m_new);
  __m256 sum = _mm256_setzero_ps();
  for (int j = 0; j < npad; j += 8) {
    const __m256 p = avx2::exp(_mm256_sub_ps(_mm256_loadu_ps(s + j), mb));
    _mm256_storeu_ps(s + j, p);
    sum = _mm256_add_ps(sum, p);
  }
  const float alpha = std::exp(m - m_new);  // 0 on the first block (m = -inf)
  l = l * alpha + hsum(sum);
  m = m_new;
  return alpha;
}

HERON_AVX2 void attend_blocks(const AttendArgs& a) {
  thread_local std::vector<float> sbuf;
  thread_local std::vector<int> nbuf;
  sbuf.resize(static_cast<size_t>(a.M) * kBk);
  nbuf.resize(static_cast<size_t>(a.M));
  float* s = sbuf.data();
  int* n = nbuf.data();
  const int D = a.D;
  const int Dv = a.Dv;
  int kend = a.k0;
  for (int r = 0; r < a.M; ++r) kend = std::max(kend, std::min(a.k1, a.end[r]));
  for (int kb = a.k0; kb < kend; kb += kBk) {
    const int nb = std::min(kBk, kend - kb);
    const int npad = (nb + 7) / 8 * 8;
    const float* k = a.k + kb * a.k_stride;
    const float* v = a.v + kb * a.v_stride;
    for (int r = 0; r < a.M; ++r) n[r] = std::clamp(a.end[r] - kb, 0, nb);
    // Row pairs compute up to the longer row; softmax_row masks the rest.
    int r = 0;
    for (; r + 2 <= a.M; r += 2) {
      const int nr = std::max(n[r], n[r + 1]);
      if (nr > 0) scores<2>(a.q + r * D, D, k, a.k_stride, nr, s + r * kBk);
    }
    if (r < a.M && n[r] > 0) scores<1>(a.q + r * D, D, k, a.k_stride, n[r], s + r * kBk);
    for (r = 0; r < a.M; ++r) {
      float* sr = s + r * kBk;
      if (n[r] == 0) {  // causal: this row sees none of the block
        std::fill(sr, sr + npad, 0.0f);
        continue;
      }
      if (a.mask) {
        const bool* visible = a.mask[r] + kb;
        for (int j = 0; j < n[r]; ++j) {
          if (!visible[j]) sr[j] = -std::numeric_limits<float>::infinity();
        }
      }
      const float alpha = softmax_row(sr, n[r], npad, a.m[r], a.l[r]);
      if (alpha != 1.0f) {
        float* acc = a.acc + r * Dv;
        const __m256 al = _mm256_set1_ps(alpha);
        for (int d = 0; d < Dv; d += 8) {
          _mm256_storeu_ps(acc + d, _mm256_mul_ps(al, _mm256_loadu_ps(acc + d)));
        }
      }
    }
    for (r = 0; r + 2 <= a.M; r += 2) {
      const int nr = std::max(n[r], n[r + 1]);
      if (nr > 0) weighted_values_rows<2>(s + r * kBk, nr, v, a.v_stride, a.acc + r * Dv, Dv);
    }
    if (r < a.M && n[r] > 0) {
      weighted_values_rows<1>(s + r * kBk, n[r], v, a.v_stride, a.acc + r * Dv, Dv);
    }
  }
}

}  // namespace

void attend_avx2(const AttendArgs& a) {
  attend_blocks(a);
}

#else

void attend_avx2(const AttendArgs& a) {
  attend_scalar(a);
}

#endif

}  // namespace heron::kernels
