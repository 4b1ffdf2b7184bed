// Milliseconds per call of heron::kernels::scaled_dot_product_attention vs
// mx::fast::scaled_dot_product_attention on SmolLM2-135M attention shapes
// (9 query heads, 3 kv heads, head_dim 64), decode and causal prefill, with
// keys/values read from a preallocated cache buffer as the KV cache does.
// Usage: attention_bench [--scalar] [--no-mlx]
#include <cstdio>
#include <cstring>

#include <mlx/mlx.h>

#include "heron/kernels/attention.h"
#include "heron/kernels/sdpa_cpu.h"
#include "timing.h"

namespace mx = mlx::core;

using heron::bench::time_per_call;

int main(int argc, char** argv) {
  bool with_mlx = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--scalar"))
      heron::kernels::set_sdpa_isa(heron::kernels::Isa::Scalar);
    if (!std::strcmp(argv[i], "--no-mlx")) with_mlx = false;
  }
  const int B = 1, Hq = 9, Hkv = 3, D = 64;
  struct Shape {
    int L, T;
  };
  const Shape shapes[] = {{1, 40}, {1, 500}, {1, 2000}, {5, 300}, {500, 500}, {2000, 2000}};
  const float scale = 0.125f;
  std::printf("%5s %5s %7s %10s %10s %8s\n", "L", "T", "causal", "heron ms", "mlx ms", "speedup");
  for (const auto& s : shapes) {
    const int cap = (s.T + 255) / 256 * 256;  // KVCache grows in steps of 256
    auto kbuf = mx::random::normal({B, Hkv, cap, D}, mx::float32, 0.0f, 1.0f, mx::random::key(1));
    auto vbuf = mx::random::normal({B, Hkv, cap, D}, mx::float32, 0.0f, 1.0f, mx::random::key(2));
    auto q = mx::random::normal({B, Hq, s.L, D}, mx::float32, 0.0f, 1.0f, mx::random::key(3));
    mx::eval(kbuf, vbuf, q);
    auto k = mx::slice(kbuf, {0, 0, 0, 0}, {B, Hkv, s.T, D});
    auto v = mx::slice(vbuf, {0, 0, 0, 0}, {B, Hkv, s.T, D});
    const bool causal = s.L > 1;
    const double ours = time_per_call(
        [&] { return heron::kernels::scaled_dot_product_attention(q, k, v, scale, causal); });
    double ref = 0.0;
    if (with_mlx) {
      ref = time_per_call([&] {
        return mx::fast::scaled_dot_product_attention(q, k, v, scale, causal ? "causal" : "");
      });
    }
    std::printf("%5d %5d %7s %10.3f %10.3f %7.1fx\n", s.L, s.T, causal ? "yes" : "no", ours * 1e3,
                ref * 1e3, ref > 0 ? ref / ours : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
