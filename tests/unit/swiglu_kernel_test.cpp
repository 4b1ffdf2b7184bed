// heron::kernels::swiglu against silu(g) * u in double precision: values
// across the sigmoid's whole range (its saturated tails included), the halves of a fused
// projection's output (strided rows), a transposed operand and lengths that leave a
// tail past the 8-wide blocks, both CPU implementations; and the operands it leaves to MLX's ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "cpu_isa_test.h"

#include "heron/kernels/swiglu.h"

namespace {

namespace mx = mlx::core;

mx::array reference(const mx::array& g, const mx::array& u) {
  return mx::multiply(mx::multiply(g, mx::sigmoid(g)), u);
}

std::vector<float> host(const mx::array& a) {
  auto c = mx::contiguous(mx::astype(a, mx::float32));
  mx::eval(c);
  return {c.data<float>(), c.data<float>() + c.size()};
}

// The worst relative error per value to silu(g) * u computed in double precision; values
// below 1e-20 in magnitude (silu's far tail, where float32 underflows) count absolutely,
// scaled by 1e20.
double worst_relative_error(const mx::array& ours, const mx::array& g, const mx::array& u) {
  const auto o = host(ours), gs = host(mx::broadcast_to(g, ours.shape())),
             us = host(mx::broadcast_to(u, ours.shape()));
  double worst = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    const double gd = gs[i];
    const double exact = gd * us[i] / (1.0 + std::exp(-gd));
    worst = std::max(worst, std::abs(o[i] - exact) / std::max(std::abs(exact), 1e-20));
  }
  return worst;
}

class SwigluKernel : public CpuIsaTest<heron::kernels::set_swiglu_isa> {};

TEST_P(SwigluKernel, MatchesMlxOps) {
  // Every gate in [-100, 100] at steps of 1/256 (silu vanishes below -87 and is g above
  // 87), then random normal rows of an odd length.
  auto grid = mx::divide(mx::astype(mx::arange(-25600, 25601), mx::float32), mx::array(256.0f));
  auto grid_up = mx::random::normal(grid.shape(), mx::float32, 0.0f, 2.0f, mx::random::key(1));
  auto g = mx::random::normal({5, 1001}, mx::float32, 0.0f, 4.0f, mx::random::key(2));
  auto u = mx::random::normal({5, 1001}, mx::float32, 0.0f, 2.0f, mx::random::key(3));
  for (const auto& [gate, up] : {std::pair{grid, grid_up}, std::pair{g, u}}) {
    auto ours = heron::kernels::swiglu(gate, up);
    EXPECT_STREQ(ours.primitive().name(), "HeronSwiglu");
    // Our exp is within about 1 ulp, the division and product round once each: a few
    // ulps (MLX's own ops are within 4e-6 here).
    EXPECT_LE(worst_relative_error(ours, gate, up), 1e-6);
  }
}

TEST_P(SwigluKernel, ReadsTheHalvesOfAFusedProjectionAndStridedOperands) {
  // [B, L, 2n] split on its last axis, as a fused gate_up projection gives them.
  auto fused = mx::random::normal({3, 4, 2 * 523}, mx::float32, 0.0f, 3.0f, mx::random::key(4));
  auto halves = mx::split(fused, 2, -1);
  auto ours = heron::kernels::swiglu(halves[0], halves[1]);
  EXPECT_LE(worst_relative_error(ours, halves[0], halves[1]), 1e-6);
  // A transposed gate, a broadcast up.
  auto g = mx::transpose(mx::random::normal({37, 5}, mx::float32, 0.0f, 2.0f, mx::random::key(5)));
  auto u = mx::broadcast_to(
      mx::random::normal({1, 37}, mx::float32, 0.0f, 1.0f, mx::random::key(6)), {5, 37});
  EXPECT_LE(worst_relative_error(heron::kernels::swiglu(g, u), g, u), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Cpu, SwigluKernel, kCpuIsas, isa_name);

TEST(SwigluFallback, LeavesOtherDtypesToMlx) {
  auto g = mx::astype(mx::random::normal({64}, mx::float32, 0.0f, 2.0f, mx::random::key(9)),
                      mx::float16);
  auto ours = heron::kernels::swiglu(g, g);
  EXPECT_EQ(ours.dtype(), mx::float16);
  EXPECT_TRUE(mx::allclose(ours, reference(g, g), 1e-2, 1e-2).item<bool>());
}

}  // namespace
