// Every GGUF block type we load, against the PyPI gguf package's own dequantization:
// tests/fixtures/gguf/quant_types.gguf holds, per type, a tensor written by gguf and
// gguf.quants.dequantize of it (tools/make_gguf_quant_fixture.py). Our conversion to
// MLX's affine form (MXFP4: MLX's mxfp4) must give the same values, and our CPU kernels
// must multiply by them (groups of 16 included); malformed blocks and unknown types are
// refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "heron/io/ggml_blocks.h"
#include "heron/io/ggml_types.h"
#include "heron/io/gguf.h"
#include "heron/io/weights.h"
#include "heron/kernels/gather_matmul.h"
#include "heron/kernels/qmm_cpu.h"
#include "heron/kernels/quantized_matmul.h"
#include "model_file_writers.h"

namespace {
using namespace heron::test;
namespace mx = mlx::core;

const std::string kFixture = std::string(HERON_FIXTURES) + "/gguf/quant_types.gguf";
constexpr int kCols = 512;

struct Expected {
  int bits, group_size;
  float max_ulps;  // 0: bit for bit
};
// Q6_K: gguf computes d*sc*(q-32) with one rounding, MLX's dequantize s*q + b with
// two; they can differ in the last bit.
const std::map<std::string, Expected> kTypes = {
    {"Q4_0", {4, 32, 0}}, {"Q4_1", {4, 32, 0}}, {"Q5_0", {5, 32, 0}}, {"Q5_1", {5, 32, 0}},
    {"Q8_0", {8, 32, 0}}, {"Q2_K", {4, 16, 0}}, {"Q3_K", {4, 16, 0}}, {"Q4_K", {4, 32, 0}},
    {"Q5_K", {5, 32, 0}}, {"Q6_K", {8, 16, 1}},
};

std::vector<float> floats(mx::array a) {
  a = mx::astype(a, mx::float32);
  mx::eval(a);
  return {a.data<float>(), a.data<float>() + a.size()};
}

// Distance in units of the last place of `ref`.
float ulps(float ours, float ref) {
  if (ours == ref) return 0.0f;
  const float ulp = std::nextafter(std::abs(ref), INFINITY) - std::abs(ref);
  return std::abs(ours - ref) / ulp;
}

struct GgufQuants : ::testing::Test {
  static void SetUpTestSuite() {
    device_ = mx::default_device();
    mx::set_default_device(mx::Device::cpu);  // our CPU kernels, even in a GPU build
    header_ = heron::io::read_gguf_header(kFixture);
    weights_ = heron::io::load_gguf_tensors(header_);
  }
  static void TearDownTestSuite() { mx::set_default_device(device_); }
  static inline mx::Device device_ = mx::Device::cpu;
  static inline heron::io::GGUFHeader header_;
  static inline heron::io::WeightMap weights_;
};

TEST_F(GgufQuants, EveryTypeDequantizesAsGguf) {
  const auto forms = heron::io::gguf_quant_forms(header_);
  for (const auto& [type, want] : kTypes) {
    SCOPED_TRACE(type);
    const auto& w = weights_.at(type + ".weight");
    const auto& scales = weights_.at(type + ".scales");
    EXPECT_EQ(w.dtype(), mx::uint32);
    EXPECT_EQ(w.shape(), (mx::Shape{3, kCols * want.bits / 32}));
    EXPECT_EQ(scales.dtype(), mx::float32);
    EXPECT_EQ(scales.shape(), (mx::Shape{3, kCols / want.group_size}));
    EXPECT_EQ(forms.at(type).group_size, want.group_size);
    EXPECT_EQ(forms.at(type).mode, "affine");
    auto ours = floats(
        mx::dequantize(w, scales, weights_.at(type + ".biases"), want.group_size, want.bits));
    auto ref = floats(weights_.at("ref." + type));
    ASSERT_EQ(ours.size(), ref.size());
    float worst = 0.0f;
    for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, ulps(ours[i], ref[i]));
    EXPECT_LE(worst, want.max_ulps);
  }
}

TEST_F(GgufQuants, VectorsBecomeFloat) {
  for (const std::string type : {"Q8_0", "Q6_K"}) {
    const auto& v = weights_.at("vec." + type);
    EXPECT_EQ(v.dtype(), mx::float32);
    EXPECT_EQ(v.shape(), (mx::Shape{256}));
    auto ours = floats(v);
    auto ref = floats(weights_.at("ref.vec." + type));
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_LE(ulps(ours[i], ref[i]), 1.0f) << type << i;
  }
}

// Decode (one row) and prefill (several rows) through our kernels, both CPU
// implementations, against a float product with gguf's values.
TEST_F(GgufQuants, KernelsMultiplyByGgufValues) {
  for (auto isa : {heron::kernels::Isa::Scalar, heron::kernels::Isa::Avx2}) {
    heron::kernels::set_qmm_isa(isa);
    for (const auto& [type, want] : kTypes) {
      for (int rows : {1, 5}) {
        SCOPED_TRACE(type + " rows " + std::to_string(rows));
        auto x = mx::random::normal({rows, kCols}, mx::float32, 0.0f, 1.0f, mx::random::key(7));
        auto ref = mx::matmul(x, mx::transpose(weights_.at("ref." + type)));
        auto ours = heron::kernels::quantized_matmul(
            x, weights_.at(type + ".weight"), weights_.at(type + ".scales"),
            weights_.at(type + ".biases"), want.group_size, want.bits);
        EXPECT_STREQ(ours.primitive().name(), "HeronQuantizedMatmul");
        mx::eval(ref, ours);
        const float scale = mx::max(mx::abs(ref)).item<float>();
        EXPECT_LE(mx::max(mx::abs(mx::subtract(ours, ref))).item<float>(), 1e-5f * scale);
      }
    }
  }
  heron::kernels::set_qmm_isa(heron::kernels::Isa::Auto);
}

// Outside our CPU kernels (another dtype here; a GPU alike), groups of 16 still work.
TEST_F(GgufQuants, GroupsOf16OutsideOurKernels) {
  auto x = mx::random::normal({2, kCols}, mx::float16, 0.0f, 1.0f, mx::random::key(3));
  auto ref = mx::matmul(mx::astype(x, mx::float32), mx::transpose(weights_.at("ref.Q6_K")));
  auto ours = heron::kernels::quantized_matmul(
      x, weights_.at("Q6_K.weight"), mx::astype(weights_.at("Q6_K.scales"), mx::float16),
      mx::astype(weights_.at("Q6_K.biases"), mx::float16), 16, 8);
  mx::eval(ref, ours);
  const float scale = mx::max(mx::abs(ref)).item<float>();
  EXPECT_LE(mx::max(mx::abs(mx::subtract(mx::astype(ours, mx::float32), ref))).item<float>(),
            2e-2f * scale);
}

// gpt-oss's MXFP4 blocks become MLX's mxfp4 (codes repacked, E8M0 scales kept): MLX's
// dequantize, our gathered-expert kernel and MLX's quantized matmul all give gguf's values;
// a 1-D MXFP4 tensor becomes them as float32.
TEST_F(GgufQuants, Mxfp4BecomesMlxMxfp4) {
  const auto& w = weights_.at("MXFP4.weight");
  const auto& scales = weights_.at("MXFP4.scales");
  EXPECT_EQ(w.dtype(), mx::uint32);
  EXPECT_EQ(w.shape(), (mx::Shape{3, kCols / 8}));
  EXPECT_EQ(scales.dtype(), mx::uint8);
  EXPECT_EQ(scales.shape(), (mx::Shape{3, kCols / 32}));
  EXPECT_EQ(weights_.count("MXFP4.biases"), 0u);
  const auto forms = heron::io::gguf_quant_forms(header_);
  EXPECT_EQ(forms.at("MXFP4").group_size, 32);
  EXPECT_EQ(forms.at("MXFP4").mode, "mxfp4");
  const auto ours = floats(mx::dequantize(w, scales, std::nullopt, 32, 4, "mxfp4"));
  EXPECT_EQ(ours, floats(weights_.at("ref.MXFP4")));  // bit for bit
  EXPECT_EQ(floats(weights_.at("vec.MXFP4")), floats(weights_.at("ref.vec.MXFP4")));

  auto x = mx::random::normal({1, 1, kCols}, mx::float32, 0.0f, 1.0f, mx::random::key(5));
  auto ref = mx::matmul(mx::reshape(x, {1, kCols}), mx::transpose(weights_.at("ref.MXFP4")));
  const auto experts = mx::array({0u, 0u}, {2});  // the matrix as a one-expert stack, twice
  auto stacked = [](const mx::array& a) { return mx::expand_dims(a, 0); };
  const auto stacked_scales = stacked(scales);
  auto gathered =
      heron::kernels::gather_matmul(x, stacked(w), &stacked_scales, nullptr, experts, 32, 4);
  auto mlx = mx::quantized_matmul(mx::reshape(x, {1, kCols}), w, scales, std::nullopt, true, 32, 4,
                                  "mxfp4");
  mx::eval(ref, gathered, mlx);
  const float scale = mx::max(mx::abs(ref)).item<float>();
  for (const auto& product : {mx::reshape(gathered, {2, 3}), mlx}) {
    EXPECT_LE(mx::max(mx::abs(mx::subtract(product, ref))).item<float>(), 1e-5f * scale);
  }
}

// The MLX-free type table (what the header reader and create see) and the converter
// agree on which types load, and the converter's widths hold the codes.
TEST(GgufQuantTypes, TypeTableAndConverterAgree) {
  for (uint32_t t = 0; t < 64; ++t) {
    const auto form = heron::io::ggml_affine_form(t);
    EXPECT_EQ(heron::io::ggml_type_quantized(t), form.has_value()) << t;
    if (form) {
      EXPECT_LE(heron::io::ggml_code_bits(t), form->bits) << t;
    }
  }
}

TEST(GgufQuantErrors, NonFiniteScaleNamesTensorAndBlock) {
  TempDir dir;
  const std::string path = dir.file("bad.gguf");
  constexpr uint32_t kQ4_K = 12;
  std::vector<uint8_t> blocks(2 * 144, 0);
  blocks[144] = 0x00, blocks[145] = 0x7C;  // block 1: d = +inf
  GgufBuilder b;
  b.tensors.push_back({"bad.weight", {256, 2}, kQ4_K, blocks, std::nullopt});
  write_file(path, b.build());
  auto h = heron::io::read_gguf_header(path);
  EXPECT_CONTAINS(error_of([&] { heron::io::load_gguf_tensors(h); }),
                  path + ": tensor 'bad.weight' block 1 has a non-finite scale");
}

}  // namespace
