#pragma once
// CPU affine-quantized matmul on raw row-major buffers: out[M, N] = x[M, K] ·
// dequant(w)[N, K]^T, where w packs `bits`-wide values low bits first into
// uint32 words and every group of `group_size` values along K has its own
// scale and bias (value = scale * q + bias), as mx::quantize produces, in float32
// (float16 ones cost the kernels more to convert than their bytes save).
#include <cstdint>

namespace heron::kernels {

struct QmmArgs {
  const float* x;       // [M, K]
  const uint32_t* w;    // [N, K * bits / 32]
  const float* scales;  // [N, K / group_size]
  const float* biases;  // [N, K / group_size]
  float* out;           // [M, N]
  int M, N, K;
  int group_size;  // 16, 32, 64 or 128
  int bits;        // 4, 5 (one bit stream: 8 values in 5 bytes) or 8
};

enum class Isa { Auto, Scalar, Avx2 };

// Runs on the calling thread plus the shared thread pool.
void qmm_cpu(const QmmArgs& a);

// For tests and benchmarks: force an implementation (Auto: best supported).
void set_qmm_isa(Isa isa);
// The implementation qmm_cpu currently uses.
Isa qmm_isa();

}  // namespace heron::kernels
