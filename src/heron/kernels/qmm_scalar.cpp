// Portable fallback for CPUs without AVX2: dequantize one weight row, then dot
// it with every row of x, so each row is unpacked once per call.
#include <algorithm>
#include <vector>

#include "heron/kernels/qmm_dispatch.h"
#include "heron/kernels/qmm_kernels.h"

namespace heron::kernels {

namespace {

constexpr int kRowsPerTask = 16;

void dequantize_row(const QmmArgs& a, int n, float* row) {
  const int words = a.K * a.bits / 32;
  const int groups = a.K / a.group_size;
  const uint32_t* w = a.w + static_cast<int64_t>(n) * words;
  const uint32_t mask = (1u << a.bits) - 1;
  for (int g = 0; g < groups; ++g) {
    const int64_t param = int64_t{n} * groups + g;
    const float scale = a.scales[param];
    const float bias = a.biases[param];
    for (int k = g * a.group_size; k < (g + 1) * a.group_size; ++k) {
      const int bit = k * a.bits, shift = bit % 32;
      uint32_t code = w[bit / 32] >> shift;
      if (shift + a.bits > 32) code |= w[bit / 32 + 1] << (32 - shift);  // 5 bits straddle
      row[k] = scale * static_cast<float>(code & mask) + bias;
    }
  }
}

}  // namespace

void qmm_scalar(const QmmArgs& a, ThreadPool& pool) {
  const int tasks = (a.N + kRowsPerTask - 1) / kRowsPerTask;
  pool.parallel_for(tasks, [&](int t) {
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(a.K));
    const int end = std::min(a.N, (t + 1) * kRowsPerTask);
    for (int n = t * kRowsPerTask; n < end; ++n) {
      dequantize_row(a, n, row.data());
      for (int m = 0; m < a.M; ++m) {
        const float* x = a.x + static_cast<int64_t>(m) * a.K;
        float acc = 0.0f;
        for (int k = 0; k < a.K; ++k) acc += x[k] * row[k];
        a.out[static_cast<int64_t>(m) * a.N + n] = acc;
      }
    }
  });
}

}  // namespace heron::kernels
