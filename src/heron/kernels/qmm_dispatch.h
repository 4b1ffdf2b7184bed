#pragma once
// The quantized kernels are templates over bits and group size;
// dispatch_qmm picks the instantiation a call's QmmArgs need (internal to
// src/heron/kernels).
#include <cstdint>
#include <utility>

#include "heron/kernels/qmm_cpu.h"

namespace heron::kernels {

// Row n's group parameters (scales or biases) of a call.
inline const float* group_params(const float* base, int n, int groups) {
  return base + int64_t{n} * groups;
}

// make(bits, group_size) with std::integral_constant values; returns what make returns.
template <class F>
auto dispatch_qmm(const QmmArgs& a, F&& make) {
  auto by_group = [&](auto bits) {
    switch (a.group_size) {
      case 16:
        return make(bits, std::integral_constant<int, 16>{});
      case 32:
        return make(bits, std::integral_constant<int, 32>{});
      case 64:
        return make(bits, std::integral_constant<int, 64>{});
      default:
        return make(bits, std::integral_constant<int, 128>{});
    }
  };
  switch (a.bits) {
    case 4:
      return by_group(std::integral_constant<int, 4>{});
    case 5:
      return by_group(std::integral_constant<int, 5>{});
    default:
      return by_group(std::integral_constant<int, 8>{});
  }
}

}  // namespace heron::kernels
