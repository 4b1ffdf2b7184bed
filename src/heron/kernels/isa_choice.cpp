#include "heron/kernels/isa_choice.h"

#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

Isa IsaChoice::current() const {
  const Isa f = forced_.load();
  if (f != Isa::Auto) return f == Isa::Avx2 && !avx2_supported() ? Isa::Scalar : f;
  return avx2_supported() ? Isa::Avx2 : Isa::Scalar;
}

}  // namespace heron::kernels
