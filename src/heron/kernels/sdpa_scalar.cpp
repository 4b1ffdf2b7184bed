// Portable fallback: one key at a time per row, the textbook online softmax.
#include <cmath>
#include <limits>

#include "heron/kernels/sdpa_kernels.h"

namespace heron::kernels {

void attend_scalar(const AttendArgs& a) {
  for (int r = 0; r < a.M; ++r) {
    const float* q = a.q + int64_t{r} * a.D;
    float* acc = a.acc + int64_t{r} * a.Dv;
    float m = a.m[r];
    float l = a.l[r];
    const int k1 = a.k1 < a.end[r] ? a.k1 : a.end[r];
    for (int j = a.k0; j < k1; ++j) {
      if (a.mask && !a.mask[r][j]) continue;
      const float* k = a.k + j * a.k_stride;
      const float* v = a.v + j * a.v_stride;
      float s = 0.0f;
      for (int d = 0; d < a.D; ++d) s += q[d] * k[d];
      if (s > m) {
        // A new max: rescale what was accumulated under the old one.
        const float alpha = std::exp(m - s);  // 0 while m is -inf
        l *= alpha;
        for (int d = 0; d < a.Dv; ++d) acc[d] *= alpha;
        m = s;
      }
      const float p = std::exp(s - m);
      l += p;
      for (int d = 0; d < a.Dv; ++d) acc[d] += p * v[d];
    }
    a.m[r] = m;
    a.l[r] = l;
  }
}

}  // namespace heron::kernels
