#pragma once
// The register-blocked float32 product both CPU matmuls of ours end in (internal to
// src/heron/kernels): the quantized one on a dequantized tile of weight rows, the float
// one on the weight rows in place.
namespace heron::kernels {

// out[i * ldo + j] = dot(x row i, w row j) for i < M, j < rows, where x is [M, K] and w
// [rows, K], both row-major float32, and K is a multiple of 8. Needs AVX2 + FMA.
void gemm_rows_avx2(const float* x, int M, int K, const float* w, int rows, float* out, int ldo);

}  // namespace heron::kernels
