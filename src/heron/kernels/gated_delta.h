#pragma once
// The gated delta rule (Qwen3-Next's and Qwen3.5's linear attention) over T positions in
// one node: per value head h and position t, with the state S [Dv, Dk] in float32,
//   S = g[t, h] * S
//   S = S + outer(beta[t, h] * (v[t, h] - S k[t, h']), k[t, h'])
//   y[t, h] = S q[t, h']
// where h' = h / (Hv / Hk) is the key head the value head reads (q and k arrive
// normalized, the readout scale folded into q, as mlx-lm's normalize_qk leaves them).
// On the CPU one task per (batch row, value head) runs the scan with the state in
// registers and cache; elsewhere the same recurrence in MLX operations, a step at a time.
// The states after chosen positions come back too: what a recurrent cache keeps to
// restore a snapshot or roll back rejected drafts without running the layer again.
#include <vector>

#include <mlx/array.h>
#include <mlx/utils.h>

#include "heron/kernels/qmm_cpu.h"  // Isa

namespace heron::kernels {

// q, k [B, T, Hk, Dk]; v [B, T, Hv, Dv] (each float32, bfloat16 or float16; any strides);
// g, beta [B, T, Hv] float32; state [B, Hv, Dv, Dk] float32; keep: ascending offsets in
// 1..T (the state after that many positions), ending with T itself. Returns {y [B, T, Hv, Dv]
// in v's dtype, the state after keep[0], ...}; the sums are float32 whatever the inputs.
// Throws std::invalid_argument for operands that do not fit these.
std::vector<mlx::core::array> gated_delta(const mlx::core::array& q, const mlx::core::array& k,
                                          const mlx::core::array& v, const mlx::core::array& g,
                                          const mlx::core::array& beta,
                                          const mlx::core::array& state,
                                          const std::vector<int>& keep,
                                          mlx::core::StreamOrDevice s = {});

// For tests and benchmarks: force the CPU kernel's implementation (Auto: best supported).
void set_gated_delta_isa(Isa isa);

// The same recurrence written with MLX operations, a position at a time (as mlx-lm's
// gated_delta_ops): the reference the kernel is tested against, and the path on devices
// the kernel does not cover.
std::vector<mlx::core::array> gated_delta_reference(
    const mlx::core::array& q, const mlx::core::array& k, const mlx::core::array& v,
    const mlx::core::array& g, const mlx::core::array& beta, const mlx::core::array& state,
    const std::vector<int>& keep, mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
