// heron::kernels::route_top_k against MLX's composition of the same routing (softmax,
// argpartition, take_along_axis, and the renormalization): the same experts per token
// (compared as sets, since neither orders them) with the same weights, for several
// expert counts, k and batch shapes; and the operands it leaves to MLX.
#include <gtest/gtest.h>

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "heron/kernels/route_top_k.h"

namespace mx = mlx::core;

namespace {

// Each row's (expert, weight) pairs sorted by expert.
std::vector<std::vector<std::pair<uint32_t, float>>> rows_of(const mx::array& experts,
                                                             const mx::array& weights) {
  const auto e = mx::contiguous(mx::astype(experts, mx::uint32));
  const auto w = mx::contiguous(mx::astype(weights, mx::float32));
  mx::eval(e, w);
  const int k = e.shape(-1);
  std::vector<std::vector<std::pair<uint32_t, float>>> out(e.size() / static_cast<size_t>(k));
  for (size_t r = 0; r < out.size(); ++r) {
    for (int j = 0; j < k; ++j) {
      out[r].emplace_back(e.data<uint32_t>()[r * k + j], w.data<float>()[r * k + j]);
    }
    std::sort(out[r].begin(), out[r].end());
  }
  return out;
}

TEST(RouteTopK, ChoosesAndWeighsAsMlxDoes) {
  uint64_t seed = 1;
  for (int experts : {4, 32, 128}) {
    for (int k : {1, 2, 4, 8}) {
      if (k > experts) continue;
      for (bool normalize : {false, true}) {
        SCOPED_TRACE(std::to_string(experts) + " experts, k " + std::to_string(k) +
                     (normalize ? ", normalized" : ""));
        const auto logits =
            mx::multiply(mx::random::normal({2, 7, experts}, mx::float32, mx::random::key(seed++)),
                         mx::array(3.0f));
        const auto probs = mx::softmax(logits, -1, true);
        const auto chosen =
            mx::slice(mx::argpartition(mx::negative(probs), k - 1, -1), {0, 0, 0}, {2, 7, k});
        auto weights = mx::take_along_axis(probs, chosen, -1);
        if (normalize) weights = mx::divide(weights, mx::sum(weights, -1, true));
        const auto [ours_e, ours_w] = heron::kernels::route_top_k(logits, k, normalize);
        EXPECT_EQ(ours_e.shape(), (mx::Shape{2, 7, k}));
        const auto ours = rows_of(ours_e, ours_w);
        const auto ref = rows_of(chosen, weights);
        ASSERT_EQ(ours.size(), ref.size());
        for (size_t r = 0; r < ours.size(); ++r) {
          for (int j = 0; j < k; ++j) {
            ASSERT_EQ(ours[r][j].first, ref[r][j].first) << "row " << r;
            EXPECT_NEAR(ours[r][j].second, ref[r][j].second, 1e-6f) << "row " << r;
          }
        }
      }
    }
  }
}

TEST(RouteTopK, LeavesOtherOperandsToMlx) {
  const auto cpu = mx::default_stream(mx::Device::cpu);
  const auto logits = mx::zeros({3, 8});
  EXPECT_TRUE(heron::kernels::route_top_k_supported(logits, 8, cpu));
  EXPECT_FALSE(heron::kernels::route_top_k_supported(logits, 9, cpu));
  EXPECT_FALSE(heron::kernels::route_top_k_supported(logits, 0, cpu));
  EXPECT_FALSE(heron::kernels::route_top_k_supported(mx::astype(logits, mx::float16), 2, cpu));
}

}  // namespace
