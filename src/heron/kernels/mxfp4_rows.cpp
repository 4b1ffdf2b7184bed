#include "heron/kernels/mxfp4_rows.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "heron/kernels/avx2_util.h"
#include "heron/kernels/float_matmul.h"
#include "heron/kernels/qmm_cpu.h"

namespace heron::kernels {

namespace {

constexpr int kGroup = 32;
// Weight rows decoded at once when x has many rows (prefill): reused by every row of x.
constexpr int kTileRows = 32;
// Up to this many rows of x, each decoded weight row is dotted with them directly.
constexpr int kDotRows = 4;

// Twice each code's value: integers, which the AVX2 decoder makes with one byte shuffle.
constexpr int8_t kTwiceFp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Half of the group's scale 2^(e - 127), the factor of the doubled values: 2^(e - 128) built
// from its bits (ldexp costs a library call a group), subnormal for e < 2.
float half_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

void decode_row_scalar(const uint8_t* codes, const uint8_t* scales, int K, float* row) {
  for (int g = 0; g < K / kGroup; ++g) {
    const float s = half_scale(scales[g]);
    for (int j = 0; j < kGroup / 2; ++j) {
      const uint8_t byte = codes[g * kGroup / 2 + j];
      row[g * kGroup + 2 * j] = s * kTwiceFp4[byte & 0xF];
      row[g * kGroup + 2 * j + 1] = s * kTwiceFp4[byte >> 4];
    }
  }
}

float dot_scalar(const float* a, const float* b, int K) {
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * b[k];
  return acc;
}

#if defined(__x86_64__)

// The low 8 signed bytes of `bytes` as floats.
HERON_AVX2 inline __m256 widen(__m128i bytes) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}

// One group's 32 values, doubled, from its 16 bytes, in order as four vectors: the low and
// high nibbles through the table, interleaved back into order, widened to floats.
HERON_AVX2 inline void decode_group(const uint8_t* codes, __m256 v[4]) {
  const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kTwiceFp4));
  const __m128i low_nibbles = _mm_set1_epi8(0x0F);
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
  const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(bytes, low_nibbles));
  const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibbles));
  const __m128i first = _mm_unpacklo_epi8(lo, hi);   // values 0..15
  const __m128i second = _mm_unpackhi_epi8(lo, hi);  // values 16..31
  v[0] = widen(first);
  v[1] = widen(_mm_srli_si128(first, 8));
  v[2] = widen(second);
  v[3] = widen(_mm_srli_si128(second, 8));
}

HERON_AVX2 void decode_row_avx2(const uint8_t* codes, const uint8_t* scales, int K, float* row) {
  for (int g = 0; g < K / kGroup; ++g) {
    __m256 v[4];
    decode_group(codes + g * kGroup / 2, v);
    const __m256 s = _mm256_set1_ps(half_scale(scales[g]));
    for (int i = 0; i < 4; ++i) _mm256_storeu_ps(row + g * kGroup + 8 * i, _mm256_mul_ps(s, v[i]));
  }
}

HERON_AVX2 inline float hsum(__m256 a) {
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

// One weight row dotted with M <= kDotRows rows of x as it is decoded (decode: the row is
// read once, from memory, and never stored): out[m * stride] for each m.
HERON_AVX2 void dot_row_avx2(const uint8_t* codes, const uint8_t* scales, int K, const float* x,
                             int M, float* out, int64_t stride) {
  __m256 acc[kDotRows];
  for (int m = 0; m < kDotRows; ++m) acc[m] = _mm256_setzero_ps();
  for (int g = 0; g < K / kGroup; ++g) {
    __m256 v[4];
    decode_group(codes + g * kGroup / 2, v);
    const __m256 s = _mm256_set1_ps(half_scale(scales[g]));
    for (int m = 0; m < M; ++m) {
      const float* xg = x + int64_t{m} * K + g * kGroup;
      __m256 p = _mm256_mul_ps(v[0], _mm256_loadu_ps(xg));
      for (int i = 1; i < 4; ++i) p = _mm256_fmadd_ps(v[i], _mm256_loadu_ps(xg + 8 * i), p);
      acc[m] = _mm256_fmadd_ps(s, p, acc[m]);
    }
  }
  for (int m = 0; m < M; ++m) out[m * stride] = hsum(acc[m]);
}

#endif

}  // namespace

void mxfp4_matmul_rows(const float* x, int M, int K, const uint32_t* w, const uint8_t* scales,
                       int n0, int n1, float* out) {
  const bool avx2 = qmm_isa() == Isa::Avx2;
  auto codes = [&](int n) { return reinterpret_cast<const uint8_t*>(w) + int64_t{n} * K / 2; };
  auto exponents = [&](int n) { return scales + int64_t{n} * (K / kGroup); };
  auto decode = [&](int n, float* row) {
#if defined(__x86_64__)
    if (avx2) return decode_row_avx2(codes(n), exponents(n), K, row);
#endif
    decode_row_scalar(codes(n), exponents(n), K, row);
  };
  const int cols = n1 - n0;
  thread_local std::vector<float> tile, part;
  if (M <= kDotRows) {
    tile.resize(static_cast<size_t>(K));
    for (int n = n0; n < n1; ++n) {
#if defined(__x86_64__)
      if (avx2) {
        dot_row_avx2(codes(n), exponents(n), K, x, M, out + (n - n0), cols);
        continue;
      }
#endif
      decode(n, tile.data());
      for (int m = 0; m < M; ++m) {
        out[int64_t{m} * cols + (n - n0)] = dot_scalar(x + int64_t{m} * K, tile.data(), K);
      }
    }
    return;
  }
  for (int t0 = n0; t0 < n1; t0 += kTileRows) {
    const int rows = std::min(kTileRows, n1 - t0);
    tile.resize(static_cast<size_t>(rows) * K);
    for (int r = 0; r < rows; ++r) decode(t0 + r, tile.data() + int64_t{r} * K);
    part.resize(static_cast<size_t>(M) * rows);
    if (avx2) {
      float_matmul_rows(x, M, K, tile.data(), rows, part.data());
    } else {
      for (int m = 0; m < M; ++m) {
        for (int r = 0; r < rows; ++r) {
          part[int64_t{m} * rows + r] =
              dot_scalar(x + int64_t{m} * K, tile.data() + int64_t{r} * K, K);
        }
      }
    }
    for (int m = 0; m < M; ++m) {
      std::copy_n(part.data() + int64_t{m} * rows, rows, out + int64_t{m} * cols + (t0 - n0));
    }
  }
}

}  // namespace heron::kernels
