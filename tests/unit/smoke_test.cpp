#include <gtest/gtest.h>
#include <mlx/mlx.h>

namespace mx = mlx::core;

TEST(Mlx, AddsOnCpu) {
  auto a = mx::array({1.0f, 2.0f});
  auto b = mx::add(a, a);
  mx::eval(b);
  EXPECT_FLOAT_EQ(b.data<float>()[1], 4.0f);
}
