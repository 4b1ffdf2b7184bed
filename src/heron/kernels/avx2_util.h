#pragma once
// AVX2 building blocks shared by the quantized matmul kernels. Everything is
// compiled for AVX2+FMA through the target attribute (the rest of the build
// stays baseline x86-64); callers check avx2_supported() first.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "heron/kernels/qmm_dispatch.h"

#define HERON_AVX2 __attribute__((target("avx2,fma")))

namespace heron::kernels::avx2 {

// 16 4-bit values from 8 bytes: byte i holds values 2i (low nibble) and 2i+1
// (high nibble); lo gets the even values, hi the odd ones.
HERON_AVX2 inline void unpack4(const uint8_t* p, __m256& lo, __m256& hi) {
  const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  lo = _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(0xF)));
  hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
}

// 8 8-bit values from 8 bytes, in order.
HERON_AVX2 inline __m256 unpack8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// 16 5-bit values from 10 bytes of one bit stream, low bits first (8 values in 5
// bytes), in order; reads nothing past the 10 bytes. Value i of a 5-byte pack sits at
// bit 5i: each 32-bit lane gathers the 4 bytes from byte 5i/8 on and shifts by 5i%8.
HERON_AVX2 inline void unpack5(const uint8_t* p, __m256& lo, __m256& hi) {
  uint16_t tail = 0;
  std::memcpy(&tail, p + 8, 2);
  const __m128i bytes =
      _mm_insert_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), tail, 4);
  const __m256i both = _mm256_broadcastsi128_si256(bytes);  // the shuffle works per lane
  const __m256i first = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 4, 1, 2, 3, 4,  //
                                         2, 3, 4, 5, 3, 4, 5, 6, 3, 4, 5, 6, 4, 5, 6, 7);
  const __m256i second = _mm256_add_epi8(first, _mm256_set1_epi8(5));
  const __m256i shifts = _mm256_setr_epi32(0, 5, 2, 7, 4, 1, 6, 3);
  const __m256i mask = _mm256_set1_epi32(0x1F);
  lo = _mm256_cvtepi32_ps(
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(both, first), shifts), mask));
  hi = _mm256_cvtepi32_ps(
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(both, second), shifts), mask));
}

// The 16 values of block `blk` of group `g` of a row's codes at w (BITS 4, 5 or 8, GS
// values a group): lo the first 8 of the kernels' x order, hi the other 8.
template <int BITS, int GS>
HERON_AVX2 inline void unpack_block(const uint8_t* w, int g, int blk, __m256& lo, __m256& hi) {
  if constexpr (BITS == 4) {
    unpack4(w + g * (GS / 2) + blk * 8, lo, hi);
  } else if constexpr (BITS == 5) {
    unpack5(w + g * (GS * 5 / 8) + blk * 10, lo, hi);
  } else {
    lo = unpack8(w + g * GS + blk * 16);
    hi = unpack8(w + g * GS + blk * 16 + 8);
  }
}

// {sum(a), sum(b), sum(c), sum(d)}.
HERON_AVX2 inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

// Stores the first n (1..4) lanes of v.
HERON_AVX2 inline void store_n(float* dst, __m128 v, int n) {
  if (n == 4) {
    _mm_storeu_ps(dst, v);
    return;
  }
  alignas(16) float t[4];
  _mm_store_ps(t, v);
  for (int i = 0; i < n; ++i) dst[i] = t[i];
}

}  // namespace heron::kernels::avx2

#endif  // __x86_64__
