// heron's CUDA kernels (kernels/cuda/) against the MLX operations they replace, on
// the GPU: the quantized matrix-vector product against mx::quantized_matmul, and
// which products heron::kernels::quantized_matmul gives it. Skipped where MLX has no
// GPU (the CPU build).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "heron/kernels/cuda/qmv.h"
#include "heron/kernels/cuda/qmv_mma.h"
#include "heron/kernels/quantized_matmul.h"

namespace {

namespace mx = mlx::core;
namespace cuda = heron::kernels::cuda;

class CudaKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!mx::is_available(mx::Device::gpu)) GTEST_SKIP() << "no GPU in this MLX build";
  }
  mx::Stream gpu() const { return mx::default_stream(mx::Device::gpu); }
};

mx::array normal(const mx::Shape& shape, float stddev, uint64_t seed, mx::Dtype dtype) {
  return mx::astype(
      mx::random::normal(shape, mx::float32, 0.0f, stddev, mx::random::key(seed), mx::Device::cpu),
      dtype, mx::Device::cpu);
}

// max |a - b| over max |b|, in float32.
float relative_error(const mx::array& a, const mx::array& b) {
  auto fa = mx::astype(a, mx::float32);
  auto fb = mx::astype(b, mx::float32);
  const float scale = mx::max(mx::abs(fb)).item<float>();
  return mx::max(mx::abs(mx::subtract(fa, fb))).item<float>() / std::max(scale, 1e-30f);
}

// rows, N, K, group size, bits, dtype.
using QmvCase = std::tuple<int, int, int, int, int, mx::Dtype>;

using QmvKernel = std::function<mx::array(const mx::array& x, const std::vector<mx::array>& q,
                                          int group, int bits, const mx::Stream& s)>;

// `kernel` against mx::quantized_matmul on random operands of the case's shapes.
void expect_matches_mlx(const QmvCase& c, const QmvKernel& kernel, const mx::Stream& gpu) {
  const auto [rows, N, K, group, bits, dtype] = c;
  auto q = mx::quantize(normal({N, K}, 0.05f, 1, dtype), group, bits, "affine", std::nullopt, gpu);
  auto x = normal({1, rows, K}, 1.0f, 2, dtype);
  mx::eval(q);
  mx::eval(x);
  auto ours = kernel(x, q, group, bits, gpu);
  EXPECT_STREQ(ours.primitive().name(), "CustomKernel");
  auto ref = mx::quantized_matmul(x, q[0], q[1], q[2], true, group, bits, "affine", gpu);
  mx::eval(ours, ref);
  ASSERT_EQ(ours.shape(), ref.shape());
  ASSERT_EQ(ours.dtype(), dtype);
  // Both accumulate in float32 and round the result once to 16 bits: what is left
  // is that rounding (bf16 keeps 8 significant bits, 2^-8 = 0.0039), the order of
  // the float sums and, for the tensor-core kernel, weights rounded to 16 bits as
  // MLX's dequantize rounds them.
  EXPECT_LT(relative_error(ours, ref), dtype == mx::bfloat16 ? 8e-3f : 1e-3f);
}

class CudaQmv : public CudaKernel, public ::testing::WithParamInterface<QmvCase> {};

TEST_P(CudaQmv, MatchesMlxQuantizedMatmul) {
  expect_matches_mlx(
      GetParam(),
      [](const mx::array& x, const std::vector<mx::array>& q, int g, int b, const mx::Stream& s) {
        EXPECT_TRUE(cuda::qmv_supported(x, q[0], q[1], q[2], g, b, s));
        return cuda::qmv(x, q[0], q[1], q[2], g, b, s);
      },
      gpu());
}

// Decode (one row), a batch of drafts (5) and the most rows (8); Llama-3.1-8B's
// shapes (q/k/v 6144 x 4096, down 4096 x 14336), a ragged N that is no multiple of
// the rows per warp, and every bits/group size.
INSTANTIATE_TEST_SUITE_P(Shapes, CudaQmv,
                         ::testing::Values(QmvCase{1, 6144, 4096, 64, 4, mx::bfloat16},
                                           QmvCase{1, 4096, 14336, 64, 4, mx::bfloat16},
                                           QmvCase{5, 4099, 1024, 64, 4, mx::bfloat16},
                                           QmvCase{8, 1000, 2048, 32, 4, mx::float16},
                                           QmvCase{1, 1000, 2048, 128, 4, mx::float16},
                                           QmvCase{1, 6144, 4096, 64, 8, mx::bfloat16},
                                           QmvCase{3, 333, 512, 32, 8, mx::float16},
                                           QmvCase{2, 512, 4096, 128, 8, mx::bfloat16}));

class CudaQmvMma : public CudaKernel, public ::testing::WithParamInterface<QmvCase> {};

TEST_P(CudaQmvMma, MatchesMlxQuantizedMatmul) {
  expect_matches_mlx(
      GetParam(),
      [](const mx::array& x, const std::vector<mx::array>& q, int g, int b, const mx::Stream& s) {
        EXPECT_TRUE(cuda::qmv_mma_supported(x, q[0], q[1], q[2], g, b, s));
        return cuda::qmv_mma(x, q[0], q[1], q[2], g, s);
      },
      gpu());
}

// One row and up to 8 (the tile's N), every group size, both 16-bit types; N
// ragged (no multiple of the 16-row tile), K from one step (128) to Llama-3.1-8B's
// 14336, and N from a few tiles (the K split at its widest) to the 8B's head.
INSTANTIATE_TEST_SUITE_P(Shapes, CudaQmvMma,
                         ::testing::Values(QmvCase{1, 6144, 4096, 64, 4, mx::bfloat16},
                                           QmvCase{1, 4096, 14336, 64, 4, mx::bfloat16},
                                           QmvCase{1, 128256, 4096, 64, 4, mx::bfloat16},
                                           QmvCase{5, 4099, 1024, 64, 4, mx::bfloat16},
                                           QmvCase{8, 1000, 2048, 32, 4, mx::float16},
                                           QmvCase{2, 1000, 2048, 128, 4, mx::float16},
                                           QmvCase{7, 37, 128, 32, 4, mx::bfloat16},
                                           QmvCase{1, 24, 8192, 128, 4, mx::float16}));

TEST_F(CudaKernel, QmvMmaTakesFourBitsAndWholeSteps) {
  auto x = normal({1, 1, 4096}, 1.0f, 2, mx::bfloat16);
  auto q8 = mx::quantize(normal({64, 4096}, 0.05f, 1, mx::bfloat16), 64, 8, "affine", std::nullopt,
                         gpu());
  EXPECT_FALSE(cuda::qmv_mma_supported(x, q8[0], q8[1], q8[2], 64, 8, gpu()));
  auto y = normal({1, 1, 4160}, 1.0f, 2, mx::bfloat16);  // 4160 = 32 * 130: no whole step
  auto q4 = mx::quantize(normal({64, 4160}, 0.05f, 1, mx::bfloat16), 32, 4, "affine", std::nullopt,
                         gpu());
  EXPECT_FALSE(cuda::qmv_mma_supported(y, q4[0], q4[1], q4[2], 32, 4, gpu()));
}

// Small weights stay with MLX's kernel: ours cost more host time per call than they
// save on the GPU there. 4 bits go to the tensor-core kernel from 16M values, 8 bits
// to the warp kernel from 32M.
TEST_F(CudaKernel, QuantizedMatmulTakesOurKernelsForLargeWeightsOnly) {
  auto x = normal({1, 1, 4096}, 1.0f, 2, mx::bfloat16);
  for (const auto& [N, bits, expected] : {std::tuple{2048, 4, false}, std::tuple{4096, 4, true},
                                          std::tuple{4096, 8, false}, std::tuple{8192, 8, true}}) {
    auto q = mx::quantize(normal({N, 4096}, 0.05f, 1, mx::bfloat16), 64, bits, "affine",
                          std::nullopt, gpu());
    auto y = heron::kernels::quantized_matmul(x, q[0], q[1], q[2], 64, bits, gpu());
    const bool ours = y.primitive().name() == std::string("CustomKernel");
    EXPECT_EQ(ours, expected) << N << " " << bits;
    EXPECT_EQ(ours, bits == 4 ? cuda::qmv_mma_preferred(q[0]) : cuda::qmv_preferred(q[0], bits));
  }
}

TEST_F(CudaKernel, QmvLeavesLongInputsToMlx) {
  auto q =
      mx::quantize(normal({64, 256}, 0.05f, 1, mx::bfloat16), 64, 4, "affine", std::nullopt, gpu());
  auto x = normal({1, cuda::kMaxRows + 1, 256}, 1.0f, 2, mx::bfloat16);
  EXPECT_FALSE(cuda::qmv_supported(x, q[0], q[1], q[2], 64, 4, gpu()));
  EXPECT_FALSE(cuda::qmv_supported(mx::astype(x, mx::float32), q[0], q[1], q[2], 64, 4, gpu()));
}

}  // namespace
