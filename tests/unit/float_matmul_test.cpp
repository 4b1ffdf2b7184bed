// heron::kernels::float_matmul (x · w^T with w [N, K] as Linear layers store it) against
// mx::matmul (the reference): decode and prefill row counts, ragged N, K that is not a
// multiple of the kernel's 16-value chunks, batch dims and strided x; and the operands
// it leaves to MLX.
#include <gtest/gtest.h>

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "heron/kernels/float_matmul.h"
#include "heron/kernels/qmm_kernels.h"

namespace mx = mlx::core;

namespace {

mx::array random(const mx::Shape& shape, uint64_t seed) {
  auto a = mx::random::normal(shape, mx::float32, 0.0f, 1.0f, mx::random::key(seed));
  mx::eval(a);
  return a;
}

// max |ours - ref| over max |ref|.
float relative_error(const mx::array& x, const mx::array& w) {
  auto ours = heron::kernels::float_matmul(x, w);
  EXPECT_STREQ(ours.primitive().name(), "HeronFloatMatmul");
  auto ref = mx::matmul(x, mx::transpose(w));
  mx::eval(ours, ref);
  EXPECT_EQ(ours.shape(), ref.shape());
  const float scale = mx::max(mx::abs(ref)).item<float>();
  return mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / std::max(scale, 1e-30f);
}

class FloatMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!heron::kernels::avx2_supported()) GTEST_SKIP() << "no AVX2: MLX runs float products";
  }
};

TEST_F(FloatMatmul, MatchesMlxForRowCountsAndShapes) {
  uint64_t seed = 1;
  for (int K : {8, 24, 384, 1544}) {
    for (int N : {1, 5, 197}) {
      const auto w = random({N, K}, seed++);
      for (int M : {1, 2, 3, 4, 5, 37, 130}) {
        SCOPED_TRACE("M " + std::to_string(M) + " N " + std::to_string(N) + " K " +
                     std::to_string(K));
        EXPECT_LE(relative_error(random({M, K}, seed++), w), 1e-5f);
      }
    }
  }
}

TEST_F(FloatMatmul, TakesBatchDimsAndStridedInputs) {
  const auto w = random({70, 64}, 100);
  EXPECT_LE(relative_error(random({2, 3, 64}, 101), w), 1e-5f);
  // x as a transposed view and w as a slice: gathered into row-major first.
  EXPECT_LE(relative_error(mx::transpose(random({64, 9}, 102)), w), 1e-5f);
  const auto wide = random({70, 128}, 103);
  EXPECT_LE(relative_error(random({5, 64}, 104), mx::slice(wide, {0, 32}, {70, 96})), 1e-5f);
}

TEST_F(FloatMatmul, LeavesOtherOperandsToMlx) {
  const auto cpu = mx::default_stream(mx::Device::cpu);
  EXPECT_TRUE(heron::kernels::float_matmul_supported(random({2, 16}, 1), random({3, 16}, 2), cpu));
  // K not a multiple of 8, 16-bit types, shapes that do not agree.
  EXPECT_FALSE(heron::kernels::float_matmul_supported(random({2, 12}, 1), random({3, 12}, 2), cpu));
  EXPECT_FALSE(heron::kernels::float_matmul_supported(mx::astype(random({2, 16}, 1), mx::float16),
                                                      mx::astype(random({3, 16}, 2), mx::float16),
                                                      cpu));
  EXPECT_FALSE(heron::kernels::float_matmul_supported(random({2, 16}, 1), random({3, 24}, 2), cpu));
  EXPECT_THROW(heron::kernels::float_matmul(random({2, 12}, 1), random({3, 12}, 2)),
               std::invalid_argument);
}

}  // namespace
