// heron::kernels::moe_experts (a mixture's experts for a few tokens in one node) against
// the same computation composed of MLX operations (gather_qmm for the gated and the down
// products, silu, the weighted sum over each token's experts), with 4- and 8-bit experts,
// gate/up and down quantized differently, one to three tokens and one to four experts
// each; and the operands it leaves to the composed path.
#include <gtest/gtest.h>

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "cpu_isa_test.h"
#include "heron/kernels/moe_experts.h"

namespace mx = mlx::core;
using heron::kernels::QuantizedExperts;

namespace {

constexpr int kExperts = 6;

QuantizedExperts quantized(const mx::Shape& shape, int group, int bits, uint64_t seed) {
  auto parts = mx::quantize(random(shape, seed), group, bits);
  return {parts[0], parts[1], parts[2], group, bits};
}

mx::array composed(const mx::array& x, const mx::array& experts, const mx::array& weights,
                   const QuantizedExperts& gu, const QuantizedExperts& down) {
  auto gather = [&](const mx::array& in, const QuantizedExperts& q) {
    return mx::gather_qmm(in, q.w, q.scales, q.biases, std::nullopt, experts, true, q.group_size,
                          q.bits);
  };
  const auto rows = mx::expand_dims(x, {-2, -3});  // [T, 1, 1, H]
  const auto both = gather(rows, gu);              // [T, k, 1, 2I]
  const auto halves = mx::split(both, 2, -1);
  const auto act = mx::multiply(mx::multiply(halves[0], mx::sigmoid(halves[0])), halves[1]);
  const auto y = mx::squeeze(gather(act, down), -2);  // [T, k, H]
  return mx::sum(mx::multiply(y, mx::expand_dims(weights, -1)), -2);
}

TEST(MoeExperts, MatchesTheComposedOperations) {
  uint64_t seed = 1;
  for (int gu_bits : {4, 8}) {
    for (int d_bits : {4, 8}) {
      for (int T : {1, 3}) {
        for (int k : {1, 4}) {
          SCOPED_TRACE("gate/up " + std::to_string(gu_bits) + " bits, down " +
                       std::to_string(d_bits) + " bits, " + std::to_string(T) + " tokens, k " +
                       std::to_string(k));
          const int H = 128, I = 96;
          const auto gu = quantized({kExperts, 2 * I, H}, 64, gu_bits, seed++);
          const auto down = quantized({kExperts, H, I}, 32, d_bits, seed++);
          const auto x = random({T, H}, seed++);
          const auto experts =
              mx::astype(mx::slice(mx::argsort(random({T, kExperts}, seed++), -1), {0, 0}, {T, k}),
                         mx::uint32);
          const auto weights = mx::abs(random({T, k}, seed++));
          const auto ours = heron::kernels::moe_experts(x, experts, weights, gu, down);
          const auto ref = composed(x, experts, weights, gu, down);
          mx::eval(ours, ref);
          ASSERT_EQ(ours.shape(), ref.shape());
          const float scale = mx::max(mx::abs(ref)).item<float>();
          EXPECT_LE(mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / scale, 1e-5f);
        }
      }
    }
  }
}

TEST(MoeExperts, LeavesOtherOperandsToTheComposedPath) {
  const auto cpu = mx::default_stream(mx::Device::cpu);
  const auto gu = quantized({kExperts, 64, 64}, 32, 4, 1);
  const auto down = quantized({kExperts, 64, 32}, 32, 4, 2);
  const auto x = random({2, 64}, 3);
  const auto experts = mx::zeros({2, 2}, mx::uint32);
  const auto weights = mx::ones({2, 2});
  EXPECT_TRUE(heron::kernels::moe_experts_supported(x, experts, weights, gu, down, cpu));
  EXPECT_FALSE(heron::kernels::moe_experts_supported(x, mx::astype(experts, mx::int32), weights, gu,
                                                     down, cpu));
  EXPECT_FALSE(heron::kernels::moe_experts_supported(mx::astype(x, mx::float16), experts, weights,
                                                     gu, down, cpu));
  EXPECT_FALSE(heron::kernels::moe_experts_supported(x, experts, weights, down, gu, cpu));
  auto three_bits = gu;
  three_bits.bits = 3;
  EXPECT_FALSE(heron::kernels::moe_experts_supported(x, experts, weights, three_bits, down, cpu));
}

}  // namespace
