#pragma once
// Products with MXFP4 weights (MLX's mxfp4 mode, OpenAI's gpt-oss experts) on the CPU, on
// raw row-major buffers (internal to src/heron/kernels). A weight row packs FP4 E2M1 codes
// eight to a uint32 word, low nibble first; each 32 values share an E8M0 scale byte e, and
// value = 2^(e - 127) * fp4(code), fp4 one of 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
// negatives. MLX's CPU backend multiplies these one scalar at a time. Here a byte shuffle
// turns 32 codes into integers (AVX2); for a few rows of x (decode) each weight row is
// dotted with them as it is decoded, for more (prefill) tiles of 32 weight rows are
// decoded once and multiplied by the float kernel.
#include <cstdint>

namespace heron::kernels {

// out [M, n1 - n0] = x [M, K] · w[n0:n1]^T for w [N, K] (K / 8 words a row) with scales
// [N, K / 32]. Runs on the calling thread (inside a pool task, as gather_matmul calls it).
void mxfp4_matmul_rows(const float* x, int M, int K, const uint32_t* w, const uint8_t* scales,
                       int n0, int n1, float* out);

}  // namespace heron::kernels
