#pragma once
// The exact GELU BERT-family encoders use, 0.5 x (1 + erf(x / sqrt 2)), with a fast CPU
// path: MLX's CPU wheel evaluates erf one scalar at a time (an encoder spent a third of
// its time there). Float32 on the CPU runs our kernel on all cores (AVX2: erf to within
// 2e-7 absolute, Abramowitz and Stegun 7.1.26 with our exp; otherwise std::erf); other
// devices and dtypes compose MLX's ops.
#include <mlx/array.h>
#include <mlx/utils.h>

#include "heron/kernels/qmm_cpu.h"  // Isa

namespace heron::kernels {

mlx::core::array gelu_erf(const mlx::core::array& x, mlx::core::StreamOrDevice s = {});

// For tests and benchmarks: force an implementation (Auto: best supported).
void set_gelu_isa(Isa isa);

}  // namespace heron::kernels
