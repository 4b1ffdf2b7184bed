#include "heron/kernels/moe_experts.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include <mlx/primitives.h>

#include "heron/kernels/cpu_task.h"
#include "heron/kernels/expert_weights.h"
#include "heron/kernels/qmm_operands.h"
#include "heron/kernels/thread_pool.h"

namespace heron::kernels {

namespace mx = mlx::core;

namespace {

class MoeExpertsCpu : public mx::UnaryPrimitive {
 public:
  MoeExpertsCpu(mx::Stream stream, int gu_group, int gu_bits, int d_group, int d_bits)
      : UnaryPrimitive(stream), params_{gu_group, gu_bits, d_group, d_bits} {}

  // inputs: x, experts, weights, gate_up (w, scales, biases), down (w, scales, biases).
  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    run_on_cpu_stream(stream(), inputs, out,
                      [p = params_](auto& in, mx::array& result) { run(in, result, p); });
  }
  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("HeronMoeExperts is CPU-only");
  }
  const char* name() const override { return "HeronMoeExperts"; }
  bool is_equivalent(const mx::Primitive& other) const override {
    return typeid(other) == typeid(*this) &&
           static_cast<const MoeExpertsCpu&>(other).params_ == params_;
  }
  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  struct Params {
    int gu_group, gu_bits, d_group, d_bits;
    bool operator==(const Params&) const = default;
  };

  static void run(const std::vector<mx::array>& in, mx::array& out, const Params& p) {
    std::vector<float> xs, ws, s1, b1, s2, b2;
    std::vector<uint32_t> es, q1, q2;
    const int T = in[0].shape(0), H = in[0].shape(1), k = in[1].shape(1);
    const int E = in[3].shape(0), I = in[3].shape(1) / 2;
    const float* x = row_major(in[0], xs);
    const uint32_t* chosen = row_major(in[1], es);
    const float* weight = row_major(in[2], ws);
    const ExpertWeights gate_up{row_major(in[3], q1),
                                row_major(in[4], s1),
                                row_major(in[5], b1),
                                2 * I,
                                H,
                                p.gu_group,
                                p.gu_bits};
    const ExpertWeights down{row_major(in[6], q2),
                             row_major(in[7], s2),
                             row_major(in[8], b2),
                             H,
                             I,
                             p.d_group,
                             p.d_bits};
    auto& pool = ThreadPool::shared();
    // Pass 1: act[pair, i] = silu(gate) * up for each (token, expert) pair, by tiles of i.
    const int pairs = T * k, t1 = column_tile(I), tiles1 = (I + t1 - 1) / t1;
    std::vector<float> act(static_cast<size_t>(pairs) * I);
    pool.parallel_for(pairs * tiles1, [&](int task) {
      const int pair = task / tiles1, i0 = (task % tiles1) * t1, i1 = std::min(I, i0 + t1);
      const uint32_t e = chosen[pair];
      float* a = act.data() + int64_t{pair} * I + i0;
      if (e >= static_cast<uint32_t>(E)) {
        std::fill(a, a + (i1 - i0), 0.0f);
        return;
      }
      std::vector<float> up(static_cast<size_t>(i1 - i0));
      const float* xt = x + int64_t{pair / k} * H;
      gate_up.product(e, xt, 1, i0, i1, a);
      gate_up.product(e, xt, 1, I + i0, I + i1, up.data());
      for (int i = 0; i < i1 - i0; ++i) a[i] = a[i] / (1.0f + std::exp(-a[i])) * up[i];
    });
    // Pass 2: out[t, cols] = sum over t's experts of weight * down(act), by tiles of H.
    const int t2 = column_tile(H), tiles2 = (H + t2 - 1) / t2;
    float* o = out.data<float>();
    pool.parallel_for(T * tiles2, [&](int task) {
      const int t = task / tiles2, n0 = (task % tiles2) * t2, n1 = std::min(H, n0 + t2);
      float* dst = o + int64_t{t} * H + n0;
      std::fill(dst, dst + (n1 - n0), 0.0f);
      std::vector<float> part(static_cast<size_t>(n1 - n0));
      for (int j = 0; j < k; ++j) {
        const int pair = t * k + j;
        if (chosen[pair] >= static_cast<uint32_t>(E)) continue;
        down.product(chosen[pair], act.data() + int64_t{pair} * I, 1, n0, n1, part.data());
        for (int c = 0; c < n1 - n0; ++c) dst[c] += weight[pair] * part[static_cast<size_t>(c)];
      }
    });
  }

  Params params_;
};

}  // namespace

bool moe_experts_supported(const mx::array& x, const mx::array& experts, const mx::array& weights,
                           const QuantizedExperts& gate_up, const QuantizedExperts& down,
                           const mx::Stream& s) {
  if (s.device != mx::Device::cpu || x.dtype() != mx::float32 || x.ndim() != 2 ||
      experts.dtype() != mx::uint32 || experts.ndim() != 2 || experts.shape(0) != x.shape(0) ||
      weights.dtype() != mx::float32 || weights.shape() != experts.shape() ||
      gate_up.w.ndim() != 3 || down.w.ndim() != 3 || gate_up.w.shape(0) != down.w.shape(0)) {
    return false;
  }
  const int H = x.shape(1), I = gate_up.w.shape(1) / 2;
  return I > 0 && gate_up.w.shape(1) == 2 * I &&
         affine_expert_shapes(gate_up.w, gate_up.scales, gate_up.biases, 2 * I, H,
                              gate_up.group_size, gate_up.bits) &&
         affine_expert_shapes(down.w, down.scales, down.biases, H, I, down.group_size, down.bits);
}

mx::array moe_experts(const mx::array& x, const mx::array& experts, const mx::array& weights,
                      const QuantizedExperts& gate_up, const QuantizedExperts& down,
                      mx::StreamOrDevice s) {
  const auto stream = mx::to_stream(s);
  if (!moe_experts_supported(x, experts, weights, gate_up, down, stream)) {
    throw std::invalid_argument("moe_experts: operands its kernel does not take");
  }
  return mx::array(x.shape(), mx::float32,
                   std::make_shared<MoeExpertsCpu>(stream, gate_up.group_size, gate_up.bits,
                                                   down.group_size, down.bits),
                   {x, experts, weights, gate_up.w, gate_up.scales, gate_up.biases, down.w,
                    down.scales, down.biases});
}

}  // namespace heron::kernels
