#pragma once
// A mixture of experts' routing on the CPU in one step: the softmax of the router's logits,
// the k most probable experts and their weights, renormalized to sum to 1 when asked (as
// mlx-lm computes them with softmax, argpartition and take_along_axis; seven MLX
// operations per layer and decode step otherwise).
#include <utility>

#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// Whether route_top_k takes logits [..., experts] float32 and k on stream `s`.
bool route_top_k_supported(const mlx::core::array& logits, int k, const mlx::core::Stream& s);
// -> (experts uint32 [..., k], in no particular order; their weights float32 [..., k]).
std::pair<mlx::core::array, mlx::core::array> route_top_k(const mlx::core::array& logits, int k,
                                                          bool normalize,
                                                          mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
