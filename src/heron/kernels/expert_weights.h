#pragma once
// One projection of every expert, affine-quantized and stacked [experts, N, K] in
// qmm_cpu's forms, as raw row-major buffers (internal to src/heron/kernels: the kernels for
// mixtures of experts read their weights through it).
#include <algorithm>
#include <cstdint>

#include "heron/kernels/qmm_cpu.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

// Output columns per pool task when a product is cut into tiles: about two tasks per
// thread, at least 32 columns each.
inline int column_tile(int columns) {
  return std::max(32, columns / std::max(1, 2 * ThreadPool::shared().size()));
}

struct ExpertWeights {
  const uint32_t* w = nullptr;    // [E, N, K * bits / 32]
  const float* scales = nullptr;  // [E, N, K / group]
  const float* biases = nullptr;  // [E, N, K / group]
  int N = 0, K = 0, group = 0, bits = 0;

  // out [M, n1 - n0] = x [M, K] · expert e's rows [n0, n1)^T. Inside a pool task the
  // kernel runs inline on the task's thread.
  void product(uint32_t e, const float* x, int M, int n0, int n1, float* out) const {
    const int64_t w_row = int64_t{K} * bits / 32, s_row = K / group;
    const int64_t row = int64_t{e} * N + n0;
    QmmArgs a{
        x,   w + row * w_row, scales + row * s_row, biases + row * s_row, out, M, n1 - n0, K, group,
        bits};
    qmm_cpu(a);
  }
};

}  // namespace heron::kernels
