#include "heron/kernels/route_top_k.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <typeinfo>

#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

class RouteTopKCpu : public mx::Primitive {
 public:
  RouteTopKCpu(mx::Stream stream, int k, bool normalize)
      : Primitive(stream), k_(k), normalize_(normalize) {}

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    run_on_cpu_stream(stream(), inputs, outputs,
                      [k = k_, normalize = normalize_](auto& in, std::vector<mx::array>& out) {
                        route(in[0], out[0], out[1], k, normalize);
                      });
  }
  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("HeronRouteTopK is CPU-only");
  }
  const char* name() const override { return "HeronRouteTopK"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    if (typeid(other) != typeid(*this)) return false;
    const auto& o = static_cast<const RouteTopKCpu&>(other);
    return k_ == o.k_ && normalize_ == o.normalize_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    auto shape = inputs[0].shape();
    shape.back() = k_;
    return {shape, shape};
  }

 private:
  static void route(const mx::array& logits, mx::array& experts, mx::array& weights, int k,
                    bool normalize) {
    std::vector<float> scratch;
    const float* l = row_major(logits, scratch);
    const int E = logits.shape(-1);
    const auto rows = static_cast<int64_t>(logits.size() / static_cast<size_t>(E));
    auto* chosen = experts.data<uint32_t>();
    auto* w = weights.data<float>();
    std::vector<float> p(static_cast<size_t>(E));
    std::vector<uint32_t> order(static_cast<size_t>(E));
    for (int64_t r = 0; r < rows; ++r, l += E, chosen += k, w += k) {
      // Softmax as MLX's precise one: exp(x - max) over the sum, in float32.
      const float top = *std::max_element(l, l + E);
      float sum = 0.0f;
      for (int e = 0; e < E; ++e) sum += (p[static_cast<size_t>(e)] = std::exp(l[e] - top));
      for (auto& v : p) v /= sum;
      std::iota(order.begin(), order.end(), 0u);
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](uint32_t a, uint32_t b) { return p[a] > p[b]; });
      float chosen_sum = 0.0f;
      for (int j = 0; j < k; ++j) {
        chosen[j] = order[static_cast<size_t>(j)];
        chosen_sum += (w[j] = p[order[static_cast<size_t>(j)]]);
      }
      for (int j = 0; j < k && normalize; ++j) w[j] /= chosen_sum;
    }
  }

  int k_;
  bool normalize_;
};

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
  auto shape = logits.shape();
  shape.back() = k;
  auto outs =
      mx::array::make_arrays({shape, shape}, {mx::uint32, mx::float32},
                             std::make_shared<RouteTopKCpu>(stream, k, normalize), {logits});
  return {outs[0], outs[1]};
}

}  // namespace heron::kernels
