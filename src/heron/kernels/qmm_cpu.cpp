#include "heron/kernels/qmm_cpu.h"

#include "heron/kernels/isa_choice.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

namespace {

IsaChoice choice;

}  // namespace

void set_qmm_isa(Isa isa) {
  choice.force(isa);
}

Isa qmm_isa() {
  return choice.current();
}

void permute_x_nibble_order(const float* x, float* xp, int64_t count) {
  for (int64_t b = 0; b < count; b += 16) {
    for (int i = 0; i < 8; ++i) {
      xp[b + i] = x[b + 2 * i];
      xp[b + 8 + i] = x[b + 2 * i + 1];
    }
  }
}

void qmm_cpu(const QmmArgs& a) {
  if (a.M == 0 || a.N == 0) return;
  auto& pool = ThreadPool::shared();
  if (qmm_isa() == Isa::Scalar) {
    qmm_scalar(a, pool);
  } else if (a.M == 1) {
    qmv_avx2(a, pool);
  } else if (a.M <= kFewRows) {
    qmv_few_avx2(a, pool);
  } else {
    qmm_avx2(a, pool);
  }
}

}  // namespace heron::kernels
