#include "heron/kernels/cuda/qmv_mma.h"

#include <variant>

#include <mlx/device.h>
#include <mlx/fast.h>
#include <mlx/ops.h>

#include "heron/kernels/cuda/qmv.h"

namespace heron::kernels::cuda {

namespace mx = mlx::core;

namespace {

// Device helpers. A 4-bit value q ORed under the exponent of 2^7 (bf16) or 2^10
// (fp16) is the 16-bit float 2^e + q; subtracting 2^e gives q exactly, and one fused
// multiply-add gives s*q + b rounded once, as MLX's dequantize does.
constexpr const char* kHelpers = R"(
__device__ inline __nv_bfloat162 pair_of(__nv_bfloat16 v) { return __bfloat162bfloat162(v); }
__device__ inline __half2 pair_of(__half v) { return __half2half2(v); }
__device__ inline uint32_t magic_bits(__nv_bfloat16) { return 0x43004300u; }
__device__ inline uint32_t magic_bits(__half) { return 0x64006400u; }

template <typename T2>
__device__ inline T2 as_pair(uint32_t u) {
  return *reinterpret_cast<const T2*>(&u);
}

template <typename T2>
__device__ inline uint32_t as_bits(T2 v) {
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Values at bits 0-3 and 16-19 of q, dequantized: (s*q_lo + b, s*q_hi + b).
template <typename T, typename T2>
__device__ inline uint32_t dequant_pair(uint32_t q, T2 s, T2 b) {
  const uint32_t magic = magic_bits(T{});
  const T2 v = as_pair<T2>((q & 0x000f000fu) | magic);
  return as_bits(__hfma2(__hsub2(v, as_pair<T2>(magic)), s, b));
}

// d += a * b for one 16x8x16 tile, float32 accumulators.
__device__ inline void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                           __nv_bfloat16) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ inline void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                           __half) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One step of a lane: its 32 values of weight rows g (qa) and g+8 (qb) with scales and
// biases s*, b*, against the 32 matching values of x at xs, as 8 tiles.
template <typename T, typename T2>
__device__ inline void mma_chunk(float (&acc)[4], uint4 qa, uint4 qb, T2 sa, T2 ba, T2 sb, T2 bb,
                                 const uint4* xs) {
  uint32_t xw[16];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint4 v = xs[i];
    xw[4 * i] = v.x;
    xw[4 * i + 1] = v.y;
    xw[4 * i + 2] = v.z;
    xw[4 * i + 3] = v.w;
  }
  const uint32_t qwa[4] = {qa.x, qa.y, qa.z, qa.w};
  const uint32_t qwb[4] = {qb.x, qb.y, qb.z, qb.w};
#pragma unroll
  for (int u = 0; u < 4; ++u) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t a[4] = {dequant_pair<T>(qwa[u] >> (8 * h), sa, ba),
                             dequant_pair<T>(qwb[u] >> (8 * h), sb, bb),
                             dequant_pair<T>(qwa[u] >> (8 * h + 4), sa, ba),
                             dequant_pair<T>(qwb[u] >> (8 * h + 4), sb, bb)};
      const uint32_t lo = xw[4 * u + h];
      const uint32_t hi = xw[4 * u + h + 2];
      const uint32_t b[2] = {__byte_perm(lo, hi, 0x5410), __byte_perm(lo, hi, 0x7632)};
      mma(acc, a, b, T{});
    }
  }
}
)";

// A warp computes 16 outputs (weight rows n0..n0+15) for up to 8 rows of x: the
// 16x8 result of one m16n8k16 tile, the weight rows as the tile's M and x's rows as
// its N. Lane (g = lane/4, t = lane%4) holds weight rows g and g+8 and x row g, and
// per step reads 16 bytes (32 values, one quantization group) of each weight row
// and the 32 matching x values at chunk 4*step + t: 128 values of K per step.
// The tile's K order is free as long as weights and x follow the same one: of each
// 8 values a 32-bit word holds, pairs (j, j+4) are what one mask takes out, so the
// 16 K positions of a tile are pairs (2h, 2h+4) and (2h+1, 2h+5) of word u of every
// lane's chunk (h = 0, 1), and x's bf16 pairs are permuted to match.
// SPLIT warps of a block share K and add their tiles at the end, so that small
// layers still give every SM enough loads in flight. x may have any batch shape:
// its rows are everything but the last axis.
constexpr const char* kSource = R"(
  using T2 = decltype(pair_of(T{}));
  const int K = x_shape[x_ndim - 1];
  int rows = 1;
  for (int i = 0; i + 1 < x_ndim; ++i) rows *= x_shape[i];
  const int N = w_shape[0];
  const int steps = K / 128;
  const int groups = K / GROUP;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int n0 = blockIdx.x * 16;
  const size_t na = min(n0 + g, N - 1);
  const size_t nb = min(n0 + g + 8, N - 1);
  const uint4* wa = reinterpret_cast<const uint4*>(w) + na * (K / 32);
  const uint4* wb = reinterpret_cast<const uint4*>(w) + nb * (K / 32);
  const uint4* xr = reinterpret_cast<const uint4*>(x + size_t(min(g, rows - 1)) * K);
  const T* sa = scales + na * groups;
  const T* ba = biases + na * groups;
  const T* sb = scales + nb * groups;
  const T* bb = biases + nb * groups;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  // UNROLL steps at a time, their weight loads issued together, so that enough
  // bytes are in flight; then the steps left over one at a time.
  int step = warp;
  for (; step + (UNROLL - 1) * SPLIT < steps; step += UNROLL * SPLIT) {
    uint4 qa[UNROLL], qb[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      const int c = (step + i * SPLIT) * 4 + t;
      qa[i] = wa[c];
      qb[i] = wb[c];
    }
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      const int c = (step + i * SPLIT) * 4 + t;
      const int grp = c * 32 / GROUP;
      mma_chunk<T>(acc, qa[i], qb[i], pair_of(sa[grp]), pair_of(ba[grp]), pair_of(sb[grp]),
                   pair_of(bb[grp]), xr + c * 4);
    }
  }
  for (; step < steps; step += SPLIT) {
    const int c = step * 4 + t;
    const int grp = c * 32 / GROUP;
    mma_chunk<T>(acc, wa[c], wb[c], pair_of(sa[grp]), pair_of(ba[grp]), pair_of(sb[grp]),
                 pair_of(bb[grp]), xr + c * 4);
  }
  if (SPLIT > 1) {
    __shared__ float partial[SPLIT][32][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) partial[warp][lane][i] = acc[i];
    __syncthreads();
    if (warp != 0) return;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      for (int k = 1; k < SPLIT; ++k) acc[i] += partial[k][lane][i];
    }
  }
  // acc: (weight row g, x rows 2t and 2t+1), then (weight row g + 8, the same x rows).
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int m = 2 * t + i % 2;
    const int n = n0 + g + 8 * (i / 2);
    if (m < rows && n < N) out[size_t(m) * N + n] = static_cast<T>(acc[i]);
  }
)";

const mx::fast::CustomKernelFunction& kernel() {
  static const auto k = mx::fast::cuda_kernel("heron_qmv_mma", {"x", "w", "scales", "biases"},
                                              {"out"}, kSource, kHelpers);
  return k;
}

constexpr int kUnroll = 4;

// mma.m16n8k16 on 16-bit floats needs compute capability 8.0 (Ampere) or later.
bool has_tensor_cores() {
  static const bool yes = [] {
    const auto& info = mx::device_info(mx::Device::gpu);
    const auto it = info.find("compute_capability_major");
    return it != info.end() && std::holds_alternative<size_t>(it->second) &&
           std::get<size_t>(it->second) >= 8;
  }();
  return yes;
}

// Warps per block that share K: enough warps in all to keep the memory busy (a few
// thousand on an H200's 132 SMs), each with at least two rounds of kUnroll steps.
int k_split(int tiles, int steps) {
  int split = 1;
  while (split < 8 && tiles * split < 2048 && steps >= 2 * kUnroll * split) split *= 2;
  return split;
}

}  // namespace

bool qmv_mma_supported(const mx::array& x, const mx::array& w, const mx::array& scales,
                       const mx::array& biases, int group_size, int bits, const mx::Stream& s) {
  // The warp kernel's operands, at 4 bits, in whole 128-value steps; the device is
  // asked about tensor cores only once the stream is known to be a GPU's.
  return bits == 4 && group_size >= 32 &&
         qmv_supported(x, w, scales, biases, group_size, bits, s) && x.shape(-1) % 128 == 0 &&
         has_tensor_cores();
}

bool qmv_mma_preferred(const mx::array& w) {
  return int64_t{w.shape(0)} * w.shape(1) * 8 >= (int64_t{16} << 20);
}

mx::array qmv_mma(const mx::array& x, const mx::array& w, const mx::array& scales,
                  const mx::array& biases, int group_size, const mx::Stream& s) {
  const int K = x.shape(-1);
  const int N = w.shape(0);
  const int tiles = (N + 15) / 16;
  const int split = k_split(tiles, K / 128);
  auto shape = x.shape();
  shape.back() = N;
  return kernel()({x, w, scales, biases}, {std::move(shape)}, {x.dtype()},
                  {tiles * split * 32, 1, 1}, {split * 32, 1, 1},
                  {{"T", x.dtype()}, {"GROUP", group_size}, {"SPLIT", split}, {"UNROLL", kUnroll}},
                  std::nullopt, false, s)[0];
}

}  // namespace heron::kernels::cuda
