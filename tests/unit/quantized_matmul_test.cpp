// heron::kernels::quantized_matmul against mx::quantized_matmul (the
// reference) on weights packed by mx::quantize: both CPU implementations
// (AVX2 and scalar), every supported bits and group size (16 included), decode and
// prefill row counts, ragged N, batch dims and strided inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "cpu_isa_test.h"

#include "heron/kernels/qmm_cpu.h"
#include "heron/kernels/quantized_matmul.h"

namespace {

namespace mx = mlx::core;

struct Quantized {
  mx::array w, scales, biases;
};

Quantized quantize(int N, int K, int group_size, int bits, uint64_t seed) {
  auto w = mx::random::normal({N, K}, mx::float32, 0.0f, 0.05f, mx::random::key(seed));
  auto q = mx::quantize(w, group_size, bits);
  mx::eval(q);
  return {q[0], q[1], q[2]};
}

mx::array random_x(const mx::Shape& shape, uint64_t seed) {
  auto x = mx::random::normal(shape, mx::float32, 0.0f, 1.0f, mx::random::key(seed));
  mx::eval(x);
  return x;
}

// max |ours - ref| over max |ref|.
float relative_error(const mx::array& x, const Quantized& q, int group_size, int bits) {
  auto ref = mx::quantized_matmul(x, q.w, q.scales, q.biases, true, group_size, bits);
  auto ours = heron::kernels::quantized_matmul(x, q.w, q.scales, q.biases, group_size, bits);
  EXPECT_STREQ(ours.primitive().name(), "HeronQuantizedMatmul");  // not the fallback
  mx::eval(ref, ours);
  EXPECT_EQ(ours.shape(), ref.shape());
  EXPECT_EQ(ours.dtype(), ref.dtype());
  const float scale = mx::max(mx::abs(ref)).item<float>();
  const float err = mx::max(mx::abs(mx::subtract(ours, ref))).item<float>();
  return err / std::max(scale, 1e-30f);
}

class QuantizedMatmul : public CpuIsaTest<heron::kernels::set_qmm_isa> {};

constexpr float kTol = 1e-5f;

TEST_P(QuantizedMatmul, MatchesMlxForAllBitsGroupsAndRowCounts) {
  const int K = 768;  // a multiple of every group size
  uint64_t seed = 1;
  for (int bits : {4, 5, 8}) {
    for (int group : {32, 64, 128}) {
      for (int N : {192, 197}) {  // 197: tails of the 4-row blocks and of the tiles
        const auto q = quantize(N, K, group, bits, seed++);
        for (int M : {1, 2, 3, 4, 5, 7, 37}) {
          SCOPED_TRACE("bits " + std::to_string(bits) + " group " + std::to_string(group) + " N " +
                       std::to_string(N) + " M " + std::to_string(M));
          EXPECT_LE(relative_error(random_x({M, K}, seed++), q, group, bits), kTol);
        }
      }
    }
  }
}

// Groups of 16 (GGUF's K types), which MLX's quantized_matmul lacks: the values of a
// group-32 quantization with every scale and bias repeated give its product.
TEST_P(QuantizedMatmul, Group16MatchesTheSameValuesAtGroup32) {
  const int K = 512;
  uint64_t seed = 200;
  for (int bits : {4, 5, 8}) {
    const auto q = quantize(197, K, 32, bits, seed++);
    const auto scales = mx::repeat(q.scales, 2, 1), biases = mx::repeat(q.biases, 2, 1);
    for (int M : {1, 3, 4, 9}) {
      SCOPED_TRACE("bits " + std::to_string(bits) + " M " + std::to_string(M));
      const auto x = random_x({M, K}, seed++);
      auto ours = heron::kernels::quantized_matmul(x, q.w, scales, biases, 16, bits);
      EXPECT_STREQ(ours.primitive().name(), "HeronQuantizedMatmul");
      auto ref = mx::quantized_matmul(x, q.w, q.scales, q.biases, true, 32, bits);
      EXPECT_TRUE(mx::allclose(ours, ref, 1e-5, 1e-4).item<bool>());
    }
  }
}

TEST_P(QuantizedMatmul, MatchesMlxOnSmolLM2Shapes) {
  struct Case {
    int M, N, K, bits;
  };
  for (auto c : {Case{300, 1536, 576, 4}, Case{300, 576, 1536, 4}, Case{1, 576, 576, 4},
                 Case{7, 1536, 576, 4}, Case{4, 576, 1536, 4}, Case{1, 49152, 576, 8},
                 Case{3, 49152, 576, 8}}) {
    SCOPED_TRACE("M " + std::to_string(c.M) + " N " + std::to_string(c.N) + " K " +
                 std::to_string(c.K) + " bits " + std::to_string(c.bits));
    const auto q = quantize(c.N, c.K, 32, c.bits, 100);
    EXPECT_LE(relative_error(random_x({c.M, c.K}, 101), q, 32, c.bits), kTol);
  }
}

TEST_P(QuantizedMatmul, KeepsBatchDimensions) {
  const auto q = quantize(192, 576, 32, 4, 7);
  EXPECT_LE(relative_error(random_x({2, 5, 576}, 8), q, 32, 4), kTol);
  EXPECT_LE(relative_error(random_x({2, 1, 576}, 9), q, 32, 4), kTol);
  EXPECT_LE(relative_error(random_x({576}, 10), q, 32, 4), kTol);  // 1-D x -> [N]
}

TEST_P(QuantizedMatmul, ReadsStridedInputs) {
  const auto q = quantize(192, 576, 64, 8, 11);
  // Transposed: [576, 9] -> [9, 576] with strides (1, 9).
  auto xt = mx::transpose(random_x({576, 9}, 12));
  EXPECT_LE(relative_error(xt, q, 64, 8), kTol);
  // Every other row and column of a wider matrix; and a single strided row.
  auto wide = random_x({8, 1152}, 13);
  auto xs = mx::slice(wide, {0, 0}, {8, 1152}, {2, 2});
  EXPECT_LE(relative_error(xs, q, 64, 8), kTol);
  auto row = mx::slice(wide, {1, 0}, {2, 1152}, {1, 2});
  EXPECT_LE(relative_error(row, q, 64, 8), kTol);
  // Every other row of a larger quantized weight (strided w, scales, biases).
  const auto big = quantize(384, 576, 64, 8, 14);
  auto every_other = [](const mx::array& a) {
    return mx::slice(a, {0, 0}, {a.shape(0), a.shape(1)}, {2, 1});
  };
  const Quantized qs{every_other(big.w), every_other(big.scales), every_other(big.biases)};
  EXPECT_LE(relative_error(random_x({3, 576}, 15), qs, 64, 8), kTol);
  EXPECT_LE(relative_error(random_x({1, 576}, 16), qs, 64, 8), kTol);
}

TEST_P(QuantizedMatmul, ComposesWithOtherOps) {
  const auto q = quantize(576, 576, 32, 4, 17);
  auto x = random_x({4, 576}, 18);
  // Two chained layers evaluated as one graph.
  auto ref = mx::quantized_matmul(x, q.w, q.scales, q.biases, true, 32, 4);
  ref = mx::quantized_matmul(mx::tanh(ref), q.w, q.scales, q.biases, true, 32, 4);
  auto ours = heron::kernels::quantized_matmul(x, q.w, q.scales, q.biases, 32, 4);
  ours = heron::kernels::quantized_matmul(mx::tanh(ours), q.w, q.scales, q.biases, 32, 4);
  EXPECT_TRUE(mx::allclose(ours, ref, 1e-5, 1e-5).item<bool>());
}

INSTANTIATE_TEST_SUITE_P(Cpu, QuantizedMatmul, kCpuIsas, isa_name);

// On the CPU, where the fast path takes only float32 (GPU builds send 16-bit decode
// products to kernels/cuda, tested in cuda_kernels_test.cpp).
TEST(QuantizedMatmulFallback, LeavesOtherDtypesToMlx) {
  const auto q = quantize(64, 128, 32, 4, 20);
  auto x = mx::astype(random_x({2, 128}, 21), mx::float16);
  auto scales = mx::astype(q.scales, mx::float16);
  auto biases = mx::astype(q.biases, mx::float16);
  auto ref = mx::quantized_matmul(x, q.w, scales, biases, true, 32, 4, "affine", mx::Device::cpu);
  auto ours = heron::kernels::quantized_matmul(x, q.w, scales, biases, 32, 4, mx::Device::cpu);
  EXPECT_EQ(ours.dtype(), mx::float16);
  EXPECT_TRUE(mx::array_equal(ours, ref).item<bool>());
}

TEST(QuantizedMatmulFallback, LetsMlxReportBadShapes) {
  const auto q = quantize(64, 128, 32, 4, 22);
  auto x = random_x({2, 96}, 23);
  EXPECT_THROW(heron::kernels::quantized_matmul(x, q.w, q.scales, q.biases, 32, 4),
               std::invalid_argument);
}

}  // namespace
