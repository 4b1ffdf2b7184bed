#pragma once
// Residual add followed by RMS normalisation in one GPU kernel:
//   sum = h + delta;  normed = rms_norm(sum, weight, eps)
// A decoder block does this twice per layer; as two kernels that is 64 extra
// launches per token on a 32-layer model, which shows at GPU decode speeds.
#include <utility>

#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels::cuda {

// Whether add_rms_norm() takes these operands on stream `s` (a GPU stream, 16-bit
// floats of one dtype, equal shapes, a last dimension that is a multiple of 8).
bool add_rms_norm_supported(const mlx::core::array& h, const mlx::core::array& delta,
                            const mlx::core::array& weight, const mlx::core::Stream& s);

// Returns {sum, normed}, both shaped like h.
std::pair<mlx::core::array, mlx::core::array> add_rms_norm(const mlx::core::array& h,
                                                           const mlx::core::array& delta,
                                                           const mlx::core::array& weight,
                                                           float eps, const mlx::core::Stream& s);

}  // namespace heron::kernels::cuda
