// Milliseconds per call of heron::kernels::gated_delta against the same recurrence in MLX
// operations a position at a time (kernels::gated_delta_reference, as mlx-lm runs it off
// Apple GPUs) on Qwen3-Next-80B-A3B's linear attention (16 key heads, 32 value heads of
// 128 x 128, float32 state): decode and prefills of 64 and 512 positions.
// Usage: gated_delta_bench [--scalar]
#include <cmath>
#include <cstdio>
#include <cstring>

#include <mlx/mlx.h>

#include "heron/kernels/gated_delta.h"
#include "timing.h"

namespace mx = mlx::core;

using heron::bench::time_per_call;

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--scalar")) {
      heron::kernels::set_gated_delta_isa(heron::kernels::Isa::Scalar);
    }
  }
  const int B = 1, Hk = 16, Hv = 32, D = 128;
  std::printf("%5s %10s %12s %8s\n", "T", "heron ms", "mlx ops ms", "speedup");
  for (int T : {1, 64, 512}) {
    auto key = [](int k) { return mx::random::key(static_cast<uint64_t>(k)); };
    auto unit = [](const mx::array& x) {
      return mx::multiply(x, mx::rsqrt(mx::sum(mx::square(x), -1, true)));
    };
    auto q = mx::multiply(unit(mx::random::normal({B, T, Hk, D}, mx::float32, key(1))),
                          mx::array(1.0f / std::sqrt(static_cast<float>(D))));
    auto k = unit(mx::random::normal({B, T, Hk, D}, mx::float32, key(2)));
    auto v = mx::random::normal({B, T, Hv, D}, mx::float32, key(3));
    auto g = mx::random::uniform(0.9f, 1.0f, {B, T, Hv}, mx::float32, key(4));
    auto beta = mx::random::uniform(0.0f, 1.0f, {B, T, Hv}, mx::float32, key(5));
    auto state = mx::random::normal({B, Hv, D, D}, mx::float32, key(6));
    mx::eval({q, k, v, g, beta, state});
    const std::vector<int> keep{T};
    const double ours = time_per_call(
        [&] { return heron::kernels::gated_delta(q, k, v, g, beta, state, keep)[1]; });
    const double ref = time_per_call(
        [&] { return heron::kernels::gated_delta_reference(q, k, v, g, beta, state, keep)[1]; });
    std::printf("%5d %10.3f %12.3f %7.1fx\n", T, ours * 1e3, ref * 1e3, ref / ours);
  }
  return 0;
}
