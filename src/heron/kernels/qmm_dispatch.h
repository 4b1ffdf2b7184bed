#pragma once
// The quantized kernels are templates over bits, group size and the scales' type;
// dispatch_qmm picks the instantiation a call's QmmArgs need (internal to
// src/heron/kernels).
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "heron/kernels/qmm_cpu.h"

namespace heron::kernels {

// An IEEE binary16 scale or bias as stored.
struct Half {
  uint16_t bits;
};

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float f = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -f : f;
  }
  const uint32_t e = exponent == 0x1F ? 0xFFu : exponent + 112;  // rebias 15 -> 127
  return std::bit_cast<float>(sign | (e << 23) | (mantissa << 13));
}

// Row n's group parameters (scales or biases) of a call.
template <class S>
const S* group_params(const void* base, int n, int groups) {
  return static_cast<const S*>(base) + int64_t{n} * groups;
}

// make(bits, group_size, scale) with std::integral_constant values for the first two
// and std::type_identity<float or Half> for the third; returns what make returns.
template <class F>
auto dispatch_qmm(const QmmArgs& a, F&& make) {
  auto by_scale = [&](auto bits, auto group) {
    return a.half_scales ? make(bits, group, std::type_identity<Half>{})
                         : make(bits, group, std::type_identity<float>{});
  };
  auto by_group = [&](auto bits) {
    switch (a.group_size) {
      case 16:
        return by_scale(bits, std::integral_constant<int, 16>{});
      case 32:
        return by_scale(bits, std::integral_constant<int, 32>{});
      case 64:
        return by_scale(bits, std::integral_constant<int, 64>{});
      default:
        return by_scale(bits, std::integral_constant<int, 128>{});
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
