#include "heron/kernels/route_top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <typeinfo>

#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

// The k largest of `score` (E values), into chosen[0..k).
void top_k(const float* score, int E, int k, std::vector<uint32_t>& order, uint32_t* chosen) {
  order.resize(static_cast<size_t>(E));
  std::iota(order.begin(), order.end(), 0u);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](uint32_t a, uint32_t b) { return score[a] > score[b]; });
  std::copy(order.begin(), order.begin() + k, chosen);
}

// One token's softmax routing (logits l, E experts).
void route_softmax(const float* l, int E, int k, bool normalize, std::vector<float>& p,
                   std::vector<uint32_t>& order, uint32_t* chosen, float* w) {
  // Softmax as MLX's precise one: exp(x - max) over the sum, in float32.
  const float top = *std::max_element(l, l + E);
  float sum = 0.0f;
  for (int e = 0; e < E; ++e) sum += (p[static_cast<size_t>(e)] = std::exp(l[e] - top));
  for (auto& v : p) v /= sum;
  top_k(p.data(), E, k, order, chosen);
  float chosen_sum = 0.0f;
  for (int j = 0; j < k; ++j) chosen_sum += (w[j] = p[chosen[j]]);
  for (int j = 0; j < k && normalize; ++j) w[j] /= chosen_sum;
}

// One token's sigmoid routing (SigmoidRouting's rule).
void route_sigmoid(const float* l, const float* bias, int E, const SigmoidRouting& rule,
                   std::vector<float>& p, std::vector<float>& biased, std::vector<uint32_t>& order,
                   uint32_t* chosen, float* w) {
  for (int e = 0; e < E; ++e) {
    p[static_cast<size_t>(e)] = 1.0f / (1.0f + std::exp(-l[e]));
    biased[static_cast<size_t>(e)] = p[static_cast<size_t>(e)] + bias[e];
  }
  if (rule.groups > 1) {
    const int size = E / rule.groups;
    std::vector<float> group_score(static_cast<size_t>(rule.groups));
    for (int g = 0; g < rule.groups; ++g) {
      float* b = biased.data() + static_cast<ptrdiff_t>(g) * size;
      float first = -std::numeric_limits<float>::infinity();
      float second = first;
      for (int e = 0; e < size; ++e) {
        if (b[e] > first) {
          second = first;
          first = b[e];
        } else if (b[e] > second) {
          second = b[e];
        }
      }
      group_score[static_cast<size_t>(g)] = first + second;
    }
    std::vector<uint32_t> groups(static_cast<size_t>(rule.groups));
    std::iota(groups.begin(), groups.end(), 0u);
    const int dropped = rule.groups - rule.topk_groups;
    std::partial_sort(groups.begin(), groups.begin() + dropped, groups.end(),
                      [&](uint32_t a, uint32_t b) { return group_score[a] < group_score[b]; });
    for (int d = 0; d < dropped; ++d) {
      std::fill_n(biased.begin() + static_cast<ptrdiff_t>(groups[static_cast<size_t>(d)]) * size,
                  size, 0.0f);
    }
  }
  top_k(biased.data(), E, rule.k, order, chosen);
  float chosen_sum = 0.0f;
  for (int j = 0; j < rule.k; ++j) chosen_sum += (w[j] = p[chosen[j]]);
  const float divide = rule.k > 1 && rule.normalize ? chosen_sum + 1e-20f : 1.0f;
  for (int j = 0; j < rule.k; ++j) w[j] = w[j] / divide * rule.scaling;
}

// Softmax routing (no bias input), or sigmoid routing with the bias as the second input.
class RouteTopKCpu : public mx::Primitive {
 public:
  RouteTopKCpu(mx::Stream stream, SigmoidRouting rule, bool sigmoid)
      : Primitive(stream), rule_(rule), sigmoid_(sigmoid) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    run_on_cpu_stream(stream(), inputs, outputs,
                      [rule = rule_, sigmoid = sigmoid_](auto& in, std::vector<mx::array>& out) {
                        route(in, out[0], out[1], rule, sigmoid);
                      });
  }
  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("HeronRouteTopK is CPU-only");
  }
  const char* name() const override { return "HeronRouteTopK"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    if (typeid(other) != typeid(*this)) return false;
    const auto& o = static_cast<const RouteTopKCpu&>(other);
    return rule_.k == o.rule_.k && rule_.normalize == o.rule_.normalize &&
           rule_.groups == o.rule_.groups && rule_.topk_groups == o.rule_.topk_groups &&
           rule_.scaling == o.rule_.scaling && sigmoid_ == o.sigmoid_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    auto shape = inputs[0].shape();
    shape.back() = rule_.k;
    return {shape, shape};
  }

 private:
  static void route(const std::vector<mx::array>& in, mx::array& experts, mx::array& weights,
                    const SigmoidRouting& rule, bool sigmoid) {
    std::vector<float> scratch, bias_scratch;
    const float* l = row_major(in[0], scratch);
    const float* bias = sigmoid ? row_major(in[1], bias_scratch) : nullptr;
    const int E = in[0].shape(-1);
    const int k = rule.k;
    const auto rows = static_cast<int64_t>(in[0].size() / static_cast<size_t>(E));
    auto* chosen = experts.data<uint32_t>();
    auto* w = weights.data<float>();
    std::vector<float> p(static_cast<size_t>(E)), biased(static_cast<size_t>(E));
    std::vector<uint32_t> order(static_cast<size_t>(E));
    for (int64_t r = 0; r < rows; ++r, l += E, chosen += k, w += k) {
      if (sigmoid) {
        route_sigmoid(l, bias, E, rule, p, biased, order, chosen, w);
      } else {
        route_softmax(l, E, k, rule.normalize, p, order, chosen, w);
      }
    }
  }

  SigmoidRouting rule_;
  bool sigmoid_;
};

std::pair<mx::array, mx::array> make_routing(const mx::Stream& stream, const SigmoidRouting& rule,
                                             bool sigmoid, const std::vector<mx::array>& inputs) {
  auto shape = inputs[0].shape();
  shape.back() = rule.k;
  auto outs = mx::array::make_arrays({shape, shape}, {mx::uint32, mx::float32},
                                     std::make_shared<RouteTopKCpu>(stream, rule, sigmoid), inputs);
  return {outs[0], outs[1]};
}

}  // namespace

bool route_top_k_supported(const mx::array& logits, int k, const mx::Stream& s) {
  return s.device == mx::Device::cpu && logits.dtype() == mx::float32 && logits.ndim() >= 1 &&
         k >= 1 && k <= logits.shape(-1);
}

std::pair<mx::array, mx::array> route_top_k(const mx::array& logits, int k, bool normalize,
                                            mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!route_top_k_supported(logits, k, stream)) {
    throw std::invalid_argument("route_top_k: operands its kernel does not take");
  }
  return make_routing(stream, SigmoidRouting{.k = k, .normalize = normalize}, false, {logits});
}

bool route_sigmoid_top_k_supported(const mx::array& logits, const mx::array& bias,
                                   const SigmoidRouting& rule, const mx::Stream& s) {
  if (!route_top_k_supported(logits, rule.k, s) || bias.dtype() != mx::float32 ||
      bias.ndim() != 1 || bias.shape(0) != logits.shape(-1) || rule.groups < 1) {
    return false;
  }
  const int E = logits.shape(-1);
  return rule.groups == 1 || (E % rule.groups == 0 && E / rule.groups >= 2 &&
                              rule.topk_groups >= 1 && rule.topk_groups <= rule.groups);
}

std::pair<mx::array, mx::array> route_sigmoid_top_k(const mx::array& logits, const mx::array& bias,
                                                    const SigmoidRouting& rule,
                                                    mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!route_sigmoid_top_k_supported(logits, bias, rule, stream)) {
    throw std::invalid_argument("route_sigmoid_top_k: operands its kernel does not take");
  }
  return make_routing(stream, rule, true, {logits, bias});
}

}  // namespace heron::kernels
