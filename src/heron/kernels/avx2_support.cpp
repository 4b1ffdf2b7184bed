#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

bool avx2_supported() {
#if defined(__x86_64__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
#else
  return false;
#endif
}

}  // namespace heron::kernels
