// LinearGroup (q/k/v, gate/up) against the separate layers: fused when the layers agree
// (float, affine-quantized), one by one when they do not (other input sizes, 4-bit
// beside 8-bit, quantized beside float) -- the same outputs either way.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include "heron/model/layers/linear.h"
#include "heron/model/loader.h"

namespace mx = mlx::core;
using heron::model::Linear;
using heron::model::LinearGroup;
using heron::model::Weights;

namespace {

mx::array normal(mx::Shape shape, uint64_t seed) {
  return mx::random::normal(std::move(shape), mx::float32, 0.0f, 0.1f, mx::random::key(seed));
}

// Layers "a" (N=48) and "b" (N=16) over K=64 inputs (quantized to `bits_a`/`bits_b` in
// groups of 32 when nonzero), and "c" (N=8) over K=32.
Weights make_weights(int bits_a, int bits_b) {
  heron::io::WeightMap map;
  for (auto [name, rows, seed, bits] :
       {std::tuple{"a", 48, 1, bits_a}, std::tuple{"b", 16, 2, bits_b}}) {
    auto w = normal({rows, 64}, seed);
    if (!bits) {
      map.insert_or_assign(std::string(name) + ".weight", w);
      continue;
    }
    auto q = mx::quantize(w, 32, bits);
    map.insert_or_assign(std::string(name) + ".weight", q[0]);
    map.insert_or_assign(std::string(name) + ".scales", q[1]);
    map.insert_or_assign(std::string(name) + ".biases", q[2]);
  }
  map.insert_or_assign("c.weight", normal({8, 32}, 3));
  return Weights(std::move(map), "test", 32, mx::float32);
}

// Each output of the group equals its layer's own output.
void expect_same_as_separate(int bits_a, int bits_b, const std::vector<std::string>& names,
                             bool fused) {
  auto group_weights = make_weights(bits_a, bits_b);
  auto group = LinearGroup::load(group_weights, names);
  EXPECT_EQ(group.fused(), fused);
  auto single_weights = make_weights(bits_a, bits_b);
  const int in = names[0] == "c" ? 32 : 64;
  auto x = normal({2, 3, in}, 4);
  auto got = group(x);
  ASSERT_EQ(got.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    auto expected = Linear::load(single_weights, names[i])(x);
    ASSERT_EQ(got[i].shape(), expected.shape());
    EXPECT_LE(mx::max(mx::abs(mx::subtract(got[i], expected))).item<float>(), 1e-5f);
  }
}

}  // namespace

TEST(LinearGroup, FusesFloatLayers) {
  expect_same_as_separate(0, 0, {"a", "b"}, true);
}

TEST(LinearGroup, FusesLayersQuantizedAlike) {
  expect_same_as_separate(4, 4, {"a", "b"}, true);
}

TEST(LinearGroup, RunsFourBitBesideEightBitOneByOne) {
  expect_same_as_separate(4, 8, {"a", "b"}, false);
}

TEST(LinearGroup, RunsQuantizedBesideFloatOneByOne) {
  expect_same_as_separate(4, 0, {"a", "b"}, false);
}

TEST(LinearGroup, SingleLayerIsNotFused) {
  expect_same_as_separate(0, 0, {"c"}, false);
}

namespace {

TEST(DtypeNames, ParsesTheThreeComputeTypes) {
  EXPECT_EQ(heron::model::dtype_from_name("bfloat16"), mx::bfloat16);
  EXPECT_EQ(heron::model::dtype_from_name("bf16"), mx::bfloat16);
  EXPECT_EQ(heron::model::dtype_from_name("float16"), mx::float16);
  EXPECT_EQ(heron::model::dtype_from_name("float32"), mx::float32);
  EXPECT_FALSE(heron::model::dtype_from_name("int8").has_value());
  EXPECT_FALSE(heron::model::dtype_from_name("").has_value());
}

}  // namespace
