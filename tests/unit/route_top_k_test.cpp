// heron::kernels::route_top_k against MLX's composition of the same routing (softmax,
// argpartition, take_along_axis, and the renormalization): the same experts per token
// (compared as sets, since neither orders them) with the same weights, for several
// expert counts, k and batch shapes; GLM-4.7-Flash's sigmoid routing against mlx-lm's
// operations the same way; and the operands it leaves to MLX.
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

// The same experts for each token, with the same weights.
void expect_same_routing(const mx::array& experts, const mx::array& weights,
                         const mx::array& ref_experts, const mx::array& ref_weights) {
  const auto ours = rows_of(experts, weights);
  const auto ref = rows_of(ref_experts, ref_weights);
  ASSERT_EQ(ours.size(), ref.size());
  for (size_t r = 0; r < ours.size(); ++r) {
    for (size_t j = 0; j < ours[r].size(); ++j) {
      ASSERT_EQ(ours[r][j].first, ref[r][j].first) << "row " << r;
      EXPECT_NEAR(ours[r][j].second, ref[r][j].second, 1e-6f) << "row " << r;
    }
  }
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
        expect_same_routing(ours_e, ours_w, chosen, weights);
      }
    }
  }
}

// mlx-lm's glm4_moe_lite group_expert_select in MLX operations.
std::pair<mx::array, mx::array> mlx_sigmoid_routing(const mx::array& logits, const mx::array& bias,
                                                    const heron::kernels::SigmoidRouting& rule) {
  const auto scores = mx::sigmoid(logits);
  auto biased = mx::add(scores, bias);
  auto shape = biased.shape();
  const int E = shape.back();
  if (rule.groups > 1) {
    auto grouped_shape = shape;
    grouped_shape.back() = rule.groups;
    grouped_shape.push_back(E / rule.groups);
    auto grouped = mx::reshape(biased, grouped_shape);
    const auto group_scores = mx::sum(mx::topk(grouped, 2, -1), -1, true);
    const int dropped = rule.groups - rule.topk_groups;
    auto stop = group_scores.shape();
    stop[stop.size() - 2] = dropped;
    const auto drop =
        mx::slice(mx::argpartition(group_scores, dropped - 1, -2), mx::Shape(stop.size(), 0), stop);
    biased = mx::reshape(mx::put_along_axis(grouped, drop, mx::array(0.0f), -2), shape);
  }
  auto stop = shape;
  stop.back() = rule.k;
  const auto chosen = mx::slice(mx::argpartition(mx::negative(biased), rule.k - 1, -1),
                                mx::Shape(stop.size(), 0), stop);
  auto weights = mx::take_along_axis(scores, chosen, -1);
  if (rule.k > 1 && rule.normalize) {
    weights = mx::divide(weights, mx::add(mx::sum(weights, -1, true), mx::array(1e-20f)));
  }
  return {chosen, mx::multiply(weights, mx::array(rule.scaling))};
}

// GLM-4.7-Flash's routing: the bias |N(0, 1)| against logits N(0, 3), so it moves the
// choice; groups from 1 to 8 (some wholly dropped), scaled weights. The bias is positive so
// that no kept expert's biased score falls below the 0 that dropped groups get: there both
// choose among equal zeros, each in its own order.
TEST(RouteTopK, SigmoidRoutingChoosesAndWeighsAsMlxLmDoes) {
  uint64_t seed = 100;
  for (int experts : {8, 64}) {
    for (int groups : {1, 2, 4, 8}) {
      if (experts / groups < 2) continue;  // a group is ranked by its two best
      for (int topk_groups = 1; topk_groups <= groups; topk_groups *= 2) {
        for (int k : {1, 2, 4}) {
          if (k > experts / groups * topk_groups) continue;
          for (bool normalize : {false, true}) {
            const heron::kernels::SigmoidRouting rule{.k = k,
                                                      .groups = groups,
                                                      .topk_groups = topk_groups,
                                                      .normalize = normalize,
                                                      .scaling = 1.8f};
            SCOPED_TRACE(std::to_string(experts) + " experts in " + std::to_string(groups) +
                         " groups, best " + std::to_string(topk_groups) + ", k " +
                         std::to_string(k) + (normalize ? ", normalized" : ""));
            const auto logits = mx::multiply(
                mx::random::normal({3, 5, experts}, mx::float32, mx::random::key(seed++)),
                mx::array(3.0f));
            const auto bias =
                mx::abs(mx::random::normal({experts}, mx::float32, mx::random::key(seed++)));
            const auto [ref_e, ref_w] = mlx_sigmoid_routing(logits, bias, rule);
            const auto [ours_e, ours_w] = heron::kernels::route_sigmoid_top_k(logits, bias, rule);
            expect_same_routing(ours_e, ours_w, ref_e, ref_w);
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
  const heron::kernels::SigmoidRouting rule{.k = 2, .groups = 4, .topk_groups = 2};
  EXPECT_TRUE(heron::kernels::route_sigmoid_top_k_supported(logits, mx::zeros({8}), rule, cpu));
  EXPECT_FALSE(heron::kernels::route_sigmoid_top_k_supported(logits, mx::zeros({7}), rule, cpu));
  auto three_groups = rule;
  three_groups.groups = 3;  // 8 experts do not split in three
  EXPECT_FALSE(
      heron::kernels::route_sigmoid_top_k_supported(logits, mx::zeros({8}), three_groups, cpu));
}

}  // namespace
