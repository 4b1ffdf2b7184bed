#pragma once
// silu(gate) * up, the gated MLP's activation, with a fast CPU path: MLX's CPU wheel
// evaluates the sigmoid's exp one scalar at a time on one thread (a tenth of a 16-row
// batched decode step of SmolLM2 went there). Float32 on the CPU runs our kernel on all
// cores (AVX2 with our exp, otherwise std::exp), reading gate and up where they lie (the
// halves of a fused gate_up projection); other devices and dtypes run MLX's compiled ops.
#include <mlx/array.h>
#include <mlx/utils.h>

#include "heron/kernels/qmm_cpu.h"  // Isa

namespace heron::kernels {

// gate and up of one shape.
mlx::core::array swiglu(const mlx::core::array& gate, const mlx::core::array& up,
                        mlx::core::StreamOrDevice s = {});

// For tests and benchmarks: force an implementation (Auto: best supported).
void set_swiglu_isa(Isa isa);

}  // namespace heron::kernels
