#pragma once
// RMS normalization with a fused CPU path: the semantics of
// mx::fast::rms_norm(x, weight, eps) (x * rsqrt(mean(x^2) + eps) * weight). On the CPU,
// MLX composes it from eight or so graph nodes, each a dispatch on the stream's thread;
// a decode step of a small model runs a hundred of them, so the host's time per node
// adds up to more than the arithmetic. This is one node. Other devices and dtypes go
// to MLX unchanged.
#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// x [..., D] float32, weight [D] float32 -> [..., D].
mlx::core::array rms_norm(const mlx::core::array& x, const mlx::core::array& weight, float eps,
                          mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
