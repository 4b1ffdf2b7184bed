// heron::kernels::gelu_erf against the same formula composed from MLX's ops (mx::erf, the
// reference) on values across erf's whole range, both CPU implementations; and the
// operands it leaves to MLX.
#include <gtest/gtest.h>

#include <cmath>

#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "cpu_isa_test.h"

#include "heron/kernels/gelu.h"

namespace {

namespace mx = mlx::core;

mx::array reference(const mx::array& x) {
  return mx::multiply(mx::multiply(mx::array(0.5f), x),
                      mx::add(mx::array(1.0f), mx::erf(mx::multiply(x, mx::array(M_SQRT1_2)))));
}

class GeluKernel : public CpuIsaTest<heron::kernels::set_gelu_isa> {};

TEST_P(GeluKernel, MatchesMlxErf) {
  // Every value in [-8, 8] at steps of 1/4096 (erf's tails and its steep middle), random
  // normal values, and a length that leaves a tail past the 8-wide blocks.
  auto grid = mx::divide(mx::astype(mx::arange(-32768, 32769), mx::float32), mx::array(4096.0f));
  auto normal = mx::random::normal({3, 1001}, mx::float32, 0.0f, 3.0f, mx::random::key(7));
  for (const auto& x : {grid, normal}) {
    auto ours = heron::kernels::gelu_erf(x);
    EXPECT_STREQ(ours.primitive().name(), "HeronGeluErf");
    auto ref = reference(x);
    mx::eval(ours, ref);
    // erf to within 2e-7: the product x/2 * erf error, plus rounding.
    const float worst =
        mx::max(mx::divide(mx::abs(mx::subtract(ours, ref)), mx::add(mx::abs(x), mx::array(1.0f))))
            .item<float>();
    EXPECT_LE(worst, 3e-7f);
  }
}

TEST_P(GeluKernel, ReadsStridedInput) {
  auto x = mx::transpose(mx::random::normal({37, 5}, mx::float32, 0.0f, 2.0f, mx::random::key(8)));
  auto ours = heron::kernels::gelu_erf(x);
  EXPECT_TRUE(mx::allclose(ours, reference(x), 1e-6, 1e-6).item<bool>());
}

INSTANTIATE_TEST_SUITE_P(Cpu, GeluKernel, kCpuIsas, isa_name);

TEST(GeluFallback, LeavesOtherDtypesToMlx) {
  auto x = mx::astype(mx::random::normal({64}, mx::float32, 0.0f, 2.0f, mx::random::key(9)),
                      mx::float16);
  auto ours = heron::kernels::gelu_erf(x);
  EXPECT_EQ(ours.dtype(), mx::float16);
  EXPECT_TRUE(mx::allclose(ours, reference(x), 1e-2, 1e-2).item<bool>());
}

}  // namespace
