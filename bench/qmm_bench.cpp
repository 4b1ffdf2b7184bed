// GMAC/s of heron::kernels::quantized_matmul vs mx::quantized_matmul on the
// SmolLM2-135M layer shapes, for decode (M=1), speculative verification (M=2..16) and
// prefill (M=512); the last column is microseconds per call of ours.
// Usage: qmm_bench [--scalar] [--no-mlx]
#include <cstdio>
#include <cstring>
#include <vector>

#include <mlx/mlx.h>

#include "heron/kernels/qmm_cpu.h"
#include "heron/kernels/quantized_matmul.h"
#include "timing.h"

namespace mx = mlx::core;

using heron::bench::time_per_call;

int main(int argc, char** argv) {
  bool with_mlx = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--scalar")) heron::kernels::set_qmm_isa(heron::kernels::Isa::Scalar);
    if (!std::strcmp(argv[i], "--no-mlx")) with_mlx = false;
  }
  struct Shape {
    int N, K, bits;
  };
  const Shape shapes[] = {
      {576, 576, 4}, {192, 576, 4}, {1536, 576, 4}, {576, 1536, 4}, {49152, 576, 8}};
  std::printf("%-16s %5s %12s %12s %8s %10s\n", "N x K (bits)", "M", "heron GMAC/s",
              "mlx GMAC/s", "speedup", "heron us");
  for (const auto& s : shapes) {
    auto w = mx::random::normal({s.N, s.K}, mx::float32, 0.0f, 0.05f, mx::random::key(1));
    auto q = mx::quantize(w, 32, s.bits);
    mx::eval(q);
    for (int M : {1, 2, 4, 8, 16, 512}) {
      auto x = mx::random::normal({M, s.K}, mx::float32, 0.0f, 1.0f, mx::random::key(2));
      mx::eval(x);
      const double macs = double(M) * s.N * s.K;
      const int batch = M <= 16 ? 16 : 1;
      const double ours = time_per_call(
          [&] { return heron::kernels::quantized_matmul(x, q[0], q[1], q[2], 32, s.bits); }, batch);
      double ref = 0.0;
      if (with_mlx) {
        ref = time_per_call(
            [&] { return mx::quantized_matmul(x, q[0], q[1], q[2], true, 32, s.bits); }, batch);
      }
      char name[32];
      std::snprintf(name, sizeof(name), "%dx%d (%d)", s.N, s.K, s.bits);
      std::printf("%-16s %5d %12.2f %12.2f %7.1fx %10.1f\n", name, M, macs / ours * 1e-9,
                  ref > 0 ? macs / ref * 1e-9 : 0.0, ref > 0 ? ref / ours : 0.0, ours * 1e6);
      std::fflush(stdout);
    }
  }
  return 0;
}
