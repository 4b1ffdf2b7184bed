// GPU decode kernels on Llama-3.1-8B's shapes (one row of x): weight bytes read per
// second by heron's CUDA quantized matrix-vector products (the tensor-core one for
// 4 bits, the warp one at 1, 2, 4 and 8 rows per warp) against mx::quantized_matmul,
// and by MLX's bf16 product of the same shape.
// Small layers cycle through copies of their weights, so that the 50 MB L2 cache
// does not serve them.
// Usage: qmv_cuda_bench [BITS]   (4 or 8; group size 64)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <mlx/mlx.h>

#include "heron/kernels/cuda/qmv.h"
#include "heron/kernels/cuda/qmv_mma.h"
#include "timing.h"

namespace mx = mlx::core;

using heron::bench::time_per_call;

int main(int argc, char** argv) {
  if (!mx::is_available(mx::Device::gpu)) {
    std::fprintf(stderr, "qmv_cuda_bench: this MLX build has no GPU\n");
    return 1;
  }
  const int bits = argc > 1 ? std::atoi(argv[1]) : 4;
  const int group = 64;
  const auto s = mx::default_stream(mx::Device::gpu);
  struct Shape {
    const char* name;
    int N, K;
  };
  const Shape shapes[] = {{"qkv", 6144, 4096},
                          {"o", 4096, 4096},
                          {"gate_up", 28672, 4096},
                          {"down", 4096, 14336},
                          {"lm_head", 128256, 4096}};
  std::printf("weight GB/s, %d-bit, group %d, bf16 activations, one row\n", bits, group);
  std::printf("%-8s %14s | quantized: %6s %6s %6s %6s %6s %6s | bf16: %6s\n", "layer", "N x K",
              "mlx", "mma", "R=1", "R=2", "R=4", "R=8", "mlx");
  for (const auto& sh : shapes) {
    auto x = mx::random::normal({1, 1, sh.K}, mx::bfloat16, 0.0f, 1.0f, mx::random::key(2), s);
    const double wbytes = 2.0 * sh.N * sh.K;
    const int copies = std::clamp(static_cast<int>(256e6 / wbytes), 1, 16);
    std::vector<mx::array> ws;
    std::vector<std::vector<mx::array>> qs;
    for (int c = 0; c < copies; ++c) {
      ws.push_back(
          mx::random::normal({sh.N, sh.K}, mx::bfloat16, 0.0f, 0.05f, mx::random::key(c), s));
      qs.push_back(mx::quantize(ws.back(), group, bits, "affine", std::nullopt, s));
      mx::eval(qs.back());
    }
    mx::eval(ws);
    mx::eval(x);
    const auto& q0 = qs[0];
    const double qbytes = double(q0[0].nbytes() + q0[1].nbytes() + q0[2].nbytes());
    int next = 0;
    // Bytes per second of f(copy), the copies taken in turn.
    auto gbs = [&](double bytes, const std::function<mx::array(int)>& f) {
      return bytes / time_per_call([&] { return f(next++ % copies); }, 16) * 1e-9;
    };
    const double mlx = gbs(qbytes, [&](int c) {
      const auto& q = qs[c];
      return mx::quantized_matmul(x, q[0], q[1], q[2], true, group, bits, "affine", s);
    });
    std::printf("%-8s %7d x %5d |            %6.0f", sh.name, sh.N, sh.K, mlx);
    if (heron::kernels::cuda::qmv_mma_supported(x, q0[0], q0[1], q0[2], group, bits, s)) {
      std::printf(" %6.0f", gbs(qbytes, [&](int c) {
                    const auto& q = qs[c];
                    return heron::kernels::cuda::qmv_mma(x, q[0], q[1], q[2], group, s);
                  }));
    } else {
      std::printf(" %6s", "-");
    }
    for (int r : {1, 2, 4, 8}) {
      std::printf(" %6.0f", gbs(qbytes, [&](int c) {
                    const auto& q = qs[c];
                    return heron::kernels::cuda::qmv(x, q[0], q[1], q[2], group, bits, s, r);
                  }));
    }
    std::printf(" | %6.0f",
                gbs(wbytes, [&](int c) { return mx::matmul(x, mx::transpose(ws[c], s), s); }));
    std::printf("\n");
    std::fflush(stdout);
  }
  // Time per call of a product too small for the GPU to matter: what each kernel
  // costs the host (building the graph node, encoding, launching).
  auto x = mx::random::normal({1, 1, 128}, mx::bfloat16, 0.0f, 1.0f, mx::random::key(2), s);
  auto q = mx::quantize(mx::random::normal({16, 128}, mx::bfloat16, 0.0f, 0.05f, {}, s), group,
                        bits, "affine", std::nullopt, s);
  mx::eval(q);
  mx::eval(x);
  auto us = [](const std::function<mx::array()>& f) { return time_per_call(f, 64) * 1e6; };
  std::printf("us per call, 16 x 128: mlx %.1f, warp R=2 %.1f", us([&] {
                return mx::quantized_matmul(x, q[0], q[1], q[2], true, group, bits, "affine", s);
              }),
              us([&] { return heron::kernels::cuda::qmv(x, q[0], q[1], q[2], group, bits, s); }));
  if (heron::kernels::cuda::qmv_mma_supported(x, q[0], q[1], q[2], group, bits, s)) {
    std::printf(", mma %.1f",
                us([&] { return heron::kernels::cuda::qmv_mma(x, q[0], q[1], q[2], group, s); }));
  }
  std::printf("\n");
  return 0;
}
