#pragma once
// AVX2 building blocks shared by the quantized matmul kernels. Everything is
// compiled for AVX2+FMA through the target attribute (the rest of the build
// stays baseline x86-64); callers check avx2_supported() first.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

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

// The 16 values of block `blk` of group `g` of a row's codes at w (BITS 4 or 8, GS
// values a group): lo the first 8 of the kernels' x order, hi the other 8.
template <int BITS, int GS>
HERON_AVX2 inline void unpack_block(const uint8_t* w, int g, int blk, __m256& lo, __m256& hi) {
  if constexpr (BITS == 4) {
    unpack4(w + g * (GS / 2) + blk * 8, lo, hi);
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
