// heron's CUDA kernels (kernels/cuda/) against the MLX operations they replace, on
// the GPU: the quantized matrix-vector product against mx::quantized_matmul, and
// which products heron::kernels::quantized_matmul gives it. Skipped where MLX has no
// GPU (the CPU build).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "heron/kernels/cuda/qmv.h"
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

class CudaQmv : public CudaKernel, public ::testing::WithParamInterface<QmvCase> {};

TEST_P(CudaQmv, MatchesMlxQuantizedMatmul) {
  const auto [rows, N, K, group, bits, dtype] = GetParam();
  auto q =
      mx::quantize(normal({N, K}, 0.05f, 1, dtype), group, bits, "affine", std::nullopt, gpu());
  auto x = normal({1, rows, K}, 1.0f, 2, dtype);
  mx::eval(q);
  mx::eval(x);
  ASSERT_TRUE(cuda::qmv_supported(x, q[0], q[1], q[2], group, bits, gpu()));
  auto ours = cuda::qmv(x, q[0], q[1], q[2], group, bits, gpu());
  // Our kernel's output, reshaped back to x's batch shape.
  EXPECT_STREQ(ours.inputs().at(0).primitive().name(), "CustomKernel");
  auto ref = mx::quantized_matmul(x, q[0], q[1], q[2], true, group, bits, "affine", gpu());
  mx::eval(ours, ref);
  ASSERT_EQ(ours.shape(), ref.shape());
  ASSERT_EQ(ours.dtype(), dtype);
  // Both accumulate in float32 and round the result once to 16 bits: what is left
  // is that rounding (bf16 keeps 8 significant bits, 2^-8 = 0.0039) plus the order
  // of the float sums.
  EXPECT_LT(relative_error(ours, ref), dtype == mx::bfloat16 ? 8e-3f : 1e-3f);
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

// Small weights stay with MLX's kernel: ours costs more host time per call than it
// saves on the GPU there.
TEST_F(CudaKernel, QuantizedMatmulTakesQmvForLargeWeightsOnly) {
  auto x = normal({1, 1, 4096}, 1.0f, 2, mx::bfloat16);
  for (const int N : {2048, 8192}) {
    auto q = mx::quantize(normal({N, 4096}, 0.05f, 1, mx::bfloat16), 64, 4, "affine", std::nullopt,
                          gpu());
    auto y = heron::kernels::quantized_matmul(x, q[0], q[1], q[2], 64, 4, gpu());
    const bool ours = y.primitive().name() == std::string("Reshape") &&
                      y.inputs().at(0).primitive().name() == std::string("CustomKernel");
    EXPECT_EQ(ours, cuda::qmv_preferred(q[0], 4)) << N;
    EXPECT_EQ(ours, N == 8192) << N;
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
