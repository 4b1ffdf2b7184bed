#pragma once
// A mixture of experts' routing on the CPU in one step: the softmax of the router's logits,
// the k most probable experts and their weights, renormalized to sum to 1 when asked (as
// mlx-lm computes them with softmax, argpartition and take_along_axis; seven MLX
// operations per layer and decode step otherwise), or the sigmoid routing of GLM-4.7-Flash
// (a dozen operations otherwise).
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

// GLM-4.7-Flash's (and DeepSeek V3's) routing, as mlx-lm computes it: sigmoid scores; the
// k experts chosen by score + bias, among the best topk_groups of `groups` equal groups
// (a group ranked by the sum of its two best biased scores; the other groups' biased
// scores set to 0); their weights the unbiased scores, divided by their sum (+ 1e-20)
// when normalize and k > 1, times scaling.
struct SigmoidRouting {
  int k = 1;
  int groups = 1, topk_groups = 1;
  bool normalize = false;
  float scaling = 1.0f;
};
// Whether route_sigmoid_top_k takes logits [..., experts] float32 and bias [experts] float32.
bool route_sigmoid_top_k_supported(const mlx::core::array& logits, const mlx::core::array& bias,
                                   const SigmoidRouting& rule, const mlx::core::Stream& s);
std::pair<mlx::core::array, mlx::core::array> route_sigmoid_top_k(const mlx::core::array& logits,
                                                                  const mlx::core::array& bias,
                                                                  const SigmoidRouting& rule,
                                                                  mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
