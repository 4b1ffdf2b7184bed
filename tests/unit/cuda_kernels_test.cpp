// heron's CUDA kernels (kernels/cuda/) against the MLX operations they replace, on
// the GPU: the quantized matrix-vector product against mx::quantized_matmul, the
// fused residual add + RMS norm against mx::add and mx::fast::rms_norm. Skipped
// where MLX has no GPU (the CPU build).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include <mlx/fast.h>
#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "heron/kernels/cuda/add_rms_norm.h"
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
  auto ours = heron::kernels::quantized_matmul(x, q[0], q[1], q[2], group, bits, gpu());
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

TEST_F(CudaKernel, QmvLeavesLongInputsToMlx) {
  auto q =
      mx::quantize(normal({64, 256}, 0.05f, 1, mx::bfloat16), 64, 4, "affine", std::nullopt, gpu());
  auto x = normal({1, cuda::kQmvMaxRows + 1, 256}, 1.0f, 2, mx::bfloat16);
  EXPECT_FALSE(cuda::qmv_supported(x, q[0], q[1], q[2], 64, 4, gpu()));
  EXPECT_FALSE(cuda::qmv_supported(mx::astype(x, mx::float32), q[0], q[1], q[2], 64, 4, gpu()));
}

using NormCase = std::tuple<int, int, mx::Dtype>;  // rows, D, dtype

class CudaAddRmsNorm : public CudaKernel, public ::testing::WithParamInterface<NormCase> {};

TEST_P(CudaAddRmsNorm, MatchesAddThenRmsNorm) {
  const auto [rows, D, dtype] = GetParam();
  auto h = normal({1, rows, D}, 1.0f, 3, dtype);
  auto delta = normal({1, rows, D}, 0.5f, 4, dtype);
  auto weight = mx::astype(mx::add(normal({D}, 0.2f, 5, mx::float32), mx::array(1.0f)), dtype);
  const float eps = 1e-5f;
  ASSERT_TRUE(cuda::add_rms_norm_supported(h, delta, weight, gpu()));
  auto [sum, normed] = cuda::add_rms_norm(h, delta, weight, eps, gpu());
  auto ref_sum = mx::add(h, delta, gpu());
  auto ref_normed = mx::fast::rms_norm(ref_sum, weight, eps, gpu());
  mx::eval({sum, normed, ref_sum, ref_normed});
  ASSERT_EQ(sum.shape(), h.shape());
  ASSERT_EQ(normed.dtype(), dtype);
  // The sum is one rounding of an exact float sum either way.
  EXPECT_EQ(relative_error(sum, ref_sum), 0.0f);
  // One 16-bit rounding of the output, maybe another inside MLX's norm.
  EXPECT_LT(relative_error(normed, ref_normed), dtype == mx::bfloat16 ? 8e-3f : 1e-3f);
}

// Llama-3.1-8B's hidden size, Qwen3-0.6B's, one that leaves threads idle, and a
// prefill of many rows.
INSTANTIATE_TEST_SUITE_P(Shapes, CudaAddRmsNorm,
                         ::testing::Values(NormCase{1, 4096, mx::bfloat16},
                                           NormCase{1, 1024, mx::float16},
                                           NormCase{3, 8 * 37, mx::bfloat16},
                                           NormCase{513, 4096, mx::float16}));

}  // namespace
