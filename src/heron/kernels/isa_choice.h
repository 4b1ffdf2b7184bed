#pragma once
// Which implementation (AVX2 or scalar) a CPU kernel runs: the best the CPU supports,
// unless a test or benchmark forces one (internal to src/heron/kernels).
#include <atomic>

#include "heron/kernels/qmm_cpu.h"  // Isa

namespace heron::kernels {

class IsaChoice {
 public:
  void force(Isa isa) { forced_.store(isa); }
  // The forced one (AVX2 only where the CPU has it), else the best supported.
  Isa current() const;

 private:
  std::atomic<Isa> forced_{Isa::Auto};
};

}  // namespace heron::kernels
