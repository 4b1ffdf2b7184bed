// Linear::concat (fused q/k/v and gate/up) against the separate layers, float and
// affine-quantized, and its refusal to fuse layers of different kinds.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include "heron/core/error.h"
#include "heron/model/layers/linear.h"
#include "heron/model/loader.h"

namespace mx = mlx::core;
using heron::model::Linear;
using heron::model::Weights;

namespace {

mx::array normal(mx::Shape shape, uint64_t seed) {
  return mx::random::normal(std::move(shape), mx::float32, 0.0f, 0.1f, mx::random::key(seed));
}

// Layers "a" (N=48) and "b" (N=16) over K=64 inputs, quantized to 4 bits in groups of
// 32 when asked.
Weights make_weights(bool quantized) {
  heron::io::WeightMap map;
  for (auto [name, rows, seed] : {std::tuple{"a", 48, 1}, std::tuple{"b", 16, 2}}) {
    auto w = normal({rows, 64}, seed);
    if (!quantized) {
      map.insert_or_assign(std::string(name) + ".weight", w);
      continue;
    }
    auto q = mx::quantize(w, 32, 4);
    map.insert_or_assign(std::string(name) + ".weight", q[0]);
    map.insert_or_assign(std::string(name) + ".scales", q[1]);
    map.insert_or_assign(std::string(name) + ".biases", q[2]);
  }
  map.insert_or_assign("c.weight", normal({8, 32}, 3));
  return Weights(std::move(map), "test", 32, mx::float32);
}

class LinearConcat : public ::testing::TestWithParam<bool> {};

TEST_P(LinearConcat, OutputsAreTheSeparateLayersSideBySide) {
  auto w = make_weights(GetParam());
  auto a = Linear::load(w, "a");
  auto b = Linear::load(w, "b");
  auto fused = Linear::concat({a, b});
  EXPECT_EQ(fused.out_features(), 64);
  auto x = normal({2, 3, 64}, 4);
  auto expected = mx::concatenate({a(x), b(x)}, -1);
  auto got = fused(x);
  ASSERT_EQ(got.shape(), expected.shape());
  EXPECT_LE(mx::max(mx::abs(mx::subtract(got, expected))).item<float>(), 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(FloatAndQuantized, LinearConcat, ::testing::Bool());

TEST(LinearConcatErrors, RefusesDifferentInputSizes) {
  auto w = make_weights(false);
  auto a = Linear::load(w, "a");
  auto c = Linear::load(w, "c");
  EXPECT_THROW(Linear::concat({a, c}), heron::Error);
}

TEST(LinearConcatErrors, RefusesMixingQuantizedAndFloat) {
  auto wq = make_weights(true);
  auto wf = make_weights(false);
  EXPECT_THROW(Linear::concat({Linear::load(wq, "a"), Linear::load(wf, "b")}), heron::Error);
}

TEST(DtypeNames, ParsesTheThreeComputeTypes) {
  EXPECT_EQ(heron::model::dtype_from_name("bfloat16"), mx::bfloat16);
  EXPECT_EQ(heron::model::dtype_from_name("bf16"), mx::bfloat16);
  EXPECT_EQ(heron::model::dtype_from_name("float16"), mx::float16);
  EXPECT_EQ(heron::model::dtype_from_name("float32"), mx::float32);
  EXPECT_FALSE(heron::model::dtype_from_name("int8").has_value());
  EXPECT_FALSE(heron::model::dtype_from_name("").has_value());
}

}  // namespace
