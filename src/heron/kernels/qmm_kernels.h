#pragma once
// Per-ISA entry points behind qmm_cpu (internal to src/heron/kernels).
#include "heron/kernels/qmm_cpu.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

void qmm_scalar(const QmmArgs& a, ThreadPool& pool);

bool avx2_supported();
// M == 1: fused unpack + dot per weight row.
void qmv_avx2(const QmmArgs& a, ThreadPool& pool);
// 2 <= M <= kFewRows: fused unpack per weight row, multiplied into up to four rows of x.
constexpr int kFewRows = 4;
void qmv_few_avx2(const QmmArgs& a, ThreadPool& pool);
// M > kFewRows: dequantize tiles of weight rows once, reuse them for every row of x.
void qmm_avx2(const QmmArgs& a, ThreadPool& pool);

// 4-bit AVX2 kernels read nibbles as (low, high) byte halves, so they take x
// reordered per 16-value block: the 8 even positions, then the 8 odd ones.
void permute_x_nibble_order(const float* x, float* xp, int64_t count);

}  // namespace heron::kernels
