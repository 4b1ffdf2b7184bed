#include "heron/kernels/cuda/add_rms_norm.h"

#include <algorithm>
#include <bit>

#include <mlx/fast.h>
#include <mlx/ops.h>

namespace heron::kernels::cuda {

namespace mx = mlx::core;

namespace {

// One block per row; each thread adds 8 values at a time (16-byte loads), keeps the
// sum's square in float, writes the sum rounded to T (what a separate add would
// store), and after the block's reduction scales its part of the row. eps arrives
// as the bits of a float because custom kernels take only integer template values.
constexpr const char* kSource = R"(
  __shared__ float partial[32];
  const int D = h_shape[1];
  const size_t base = size_t(blockIdx.x) * D;
  float squares = 0.0f;
  for (int i = threadIdx.x * 8; i < D; i += blockDim.x * 8) {
    const uint4 a = *reinterpret_cast<const uint4*>(h + base + i);
    const uint4 b = *reinterpret_cast<const uint4*>(delta + base + i);
    uint4 o;
    const T* pa = reinterpret_cast<const T*>(&a);
    const T* pb = reinterpret_cast<const T*>(&b);
    T* po = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      po[j] = static_cast<T>(static_cast<float>(pa[j]) + static_cast<float>(pb[j]));
      const float v = static_cast<float>(po[j]);
      squares += v * v;
    }
    *reinterpret_cast<uint4*>(sum + base + i) = o;
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) squares += __shfl_xor_sync(0xffffffffu, squares, o);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = squares;
  __syncthreads();
  if (warp == 0) {
    float t = lane < (blockDim.x + 31) / 32 ? partial[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o /= 2) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (lane == 0) partial[0] = t;
  }
  __syncthreads();
  const float scale = rsqrtf(partial[0] / D + __int_as_float(EPS_BITS));
  for (int i = threadIdx.x * 8; i < D; i += blockDim.x * 8) {
    const uint4 a = *reinterpret_cast<const uint4*>(sum + base + i);
    const uint4 g = *reinterpret_cast<const uint4*>(weight + i);
    uint4 o;
    const T* pa = reinterpret_cast<const T*>(&a);
    const T* pg = reinterpret_cast<const T*>(&g);
    T* po = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      po[j] = static_cast<T>(static_cast<float>(pa[j]) * scale * static_cast<float>(pg[j]));
    }
    *reinterpret_cast<uint4*>(normed + base + i) = o;
  }
)";

const mx::fast::CustomKernelFunction& kernel() {
  static const auto k = mx::fast::cuda_kernel("heron_add_rms_norm", {"h", "delta", "weight"},
                                              {"sum", "normed"}, kSource);
  return k;
}

}  // namespace

bool add_rms_norm_supported(const mx::array& h, const mx::array& delta, const mx::array& weight,
                            const mx::Stream& s) {
  if (s.device != mx::Device::gpu) return false;
  if (h.dtype() != mx::bfloat16 && h.dtype() != mx::float16) return false;
  if (delta.dtype() != h.dtype() || weight.dtype() != h.dtype()) return false;
  if (h.ndim() < 1 || h.shape() != delta.shape() || weight.ndim() != 1) return false;
  const int D = h.shape(-1);
  return D > 0 && D % 8 == 0 && weight.shape(0) == D;
}

std::pair<mx::array, mx::array> add_rms_norm(const mx::array& h, const mx::array& delta,
                                             const mx::array& weight, float eps,
                                             const mx::Stream& s) {
  const int D = h.shape(-1);
  const int rows = static_cast<int>(h.size() / D);
  // A thread per 8 values, in whole warps, at most 256 threads (longer rows loop).
  const int threads = std::clamp((D / 8 + 31) / 32 * 32, 32, 256);
  const mx::Shape flat{rows, D};
  auto out =
      kernel()({mx::reshape(h, flat, s), mx::reshape(delta, flat, s), weight}, {flat, flat},
               {h.dtype(), h.dtype()}, {rows * threads, 1, 1}, {threads, 1, 1},
               {{"T", h.dtype()}, {"EPS_BITS", std::bit_cast<int>(eps)}}, std::nullopt, false, s);
  return {mx::reshape(out[0], h.shape(), s), mx::reshape(out[1], h.shape(), s)};
}

}  // namespace heron::kernels::cuda
