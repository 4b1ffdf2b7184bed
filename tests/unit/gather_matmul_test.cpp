// heron::kernels::gather_matmul (each row times the expert matrix its index names) against
// MLX's gather_mm and gather_qmm on the same operands: decode's few rows with an index
// each, prefill's rows sorted by expert, x broadcast over the chosen experts, float and
// 4/5/8-bit affine weights with every group size (16, which MLX refuses, against our dense
// kernel one row at a time) and MXFP4 weights, both CPU ISAs; and the operands it leaves
// to MLX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <mlx/ops.h>
#include <mlx/primitives.h>
#include <mlx/random.h>
#include <mlx/transforms.h>

#include "cpu_isa_test.h"
#include "heron/kernels/gather_matmul.h"
#include "heron/kernels/qmm_kernels.h"
#include "heron/kernels/quantized_matmul.h"

namespace mx = mlx::core;
using heron::kernels::gather_matmul;
using heron::kernels::gather_matmul_supported;

namespace {

constexpr int kExperts = 6;

mx::array expert_indices(const mx::Shape& shape, uint64_t seed, bool sorted) {
  auto i = mx::astype(mx::random::randint(0, kExperts, shape, mx::int32, mx::random::key(seed)),
                      mx::uint32);
  if (sorted) i = mx::sort(mx::flatten(i));
  mx::eval(i);
  return i;
}

float relative_error(const mx::array& ours, const mx::array& ref) {
  EXPECT_STREQ(ours.inputs().at(0).primitive().name(), "HeronGatherMatmul");  // reshaped
  mx::eval(ours, ref);
  EXPECT_EQ(ours.shape(), ref.shape());
  const float scale = std::max(mx::max(mx::abs(ref)).item<float>(), 1e-30f);
  return mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / scale;
}

class GatherMatmul : public CpuIsaTest<heron::kernels::set_qmm_isa> {};

TEST_P(GatherMatmul, FloatExpertsMatchGatherMm) {
  if (!heron::kernels::avx2_supported()) GTEST_SKIP() << "no AVX2: MLX runs float products";
  uint64_t seed = 1;
  for (int K : {8, 64, 200}) {
    const auto w = random({kExperts, 37, K}, seed++);
    const auto wt = mx::swapaxes(w, -1, -2);
    // Decode: x [1, 1, 1, 1, K] over 2 experts; prefill: x [24, 1, K] sorted by expert.
    const auto x1 = random({1, 1, 1, 1, K}, seed++);
    const auto i1 = expert_indices({1, 1, 2}, seed++, false);
    EXPECT_LE(relative_error(gather_matmul(x1, w, nullptr, nullptr, i1, 0, 0),
                             mx::gather_mm(x1, wt, std::nullopt, i1)),
              1e-5f);
    const auto x2 = random({24, 1, K}, seed++);
    const auto i2 = expert_indices({24}, seed++, true);
    EXPECT_LE(relative_error(gather_matmul(x2, w, nullptr, nullptr, i2, 0, 0),
                             mx::gather_mm(x2, wt, std::nullopt, i2, true)),
              1e-5f);
  }
}

TEST_P(GatherMatmul, QuantizedExpertsMatchGatherQmm) {
  uint64_t seed = 100;
  for (int bits : {4, 5, 8}) {
    for (int group : {16, 32, 64, 128}) {
      SCOPED_TRACE("bits " + std::to_string(bits) + " group " + std::to_string(group));
      const int K = 256, N = 40;
      // mx::quantize has no groups of 16: those take group-32 codes with scales and biases
      // of their own, and the reference is our dense kernel, one row and expert at a time.
      const auto parts = mx::quantize(random({kExperts, N, K}, seed++), std::max(group, 32), bits);
      const auto& w = parts[0];
      const auto scales = group >= 32 ? parts[1]
                                      : mx::add(mx::array(0.05f),
                                                mx::abs(random({kExperts, N, K / group}, seed++)));
      const auto biases = group >= 32 ? parts[2] : random({kExperts, N, K / group}, seed++);
      auto reference = [&](const mx::array& x, const mx::array& idx, bool sorted) {
        if (group >= 32) {
          return mx::gather_qmm(x, w, scales, biases, std::nullopt, idx, true, group, bits,
                                "affine", std::nullopt, sorted);
        }
        auto shape = idx.shape();
        shape.push_back(1);
        shape.push_back(K);
        const auto rows =
            mx::reshape(mx::broadcast_to(x, shape), {static_cast<int>(idx.size()), K});
        const auto flat = mx::flatten(idx);
        mx::eval(flat);
        std::vector<mx::array> out;
        for (int r = 0; r < static_cast<int>(idx.size()); ++r) {
          const int e = static_cast<int>(flat.data<uint32_t>()[r]);
          auto expert = [e](const mx::array& a) {
            return mx::squeeze(mx::slice(a, {e, 0, 0}, {e + 1, a.shape(1), a.shape(2)}), 0);
          };
          out.push_back(heron::kernels::quantized_matmul(mx::slice(rows, {r, 0}, {r + 1, K}),
                                                         expert(w), expert(scales), expert(biases),
                                                         group, bits));
        }
        shape.back() = N;
        return mx::reshape(mx::concatenate(out, 0), shape);
      };
      // Tokens [2, 3] with 4 experts each (x broadcast over them), then sorted rows.
      const auto x1 = random({2, 3, 1, 1, K}, seed++);
      const auto i1 = expert_indices({2, 3, 4}, seed++, false);
      ASSERT_TRUE(gather_matmul_supported(x1, w, &scales, &biases, i1, group, bits,
                                          mx::default_stream(mx::Device::cpu)));
      EXPECT_LE(relative_error(gather_matmul(x1, w, &scales, &biases, i1, group, bits),
                               reference(x1, i1, false)),
                1e-5f);
      const auto x2 = random({40, 1, K}, seed++);
      const auto i2 = expert_indices({40}, seed++, true);
      EXPECT_LE(relative_error(gather_matmul(x2, w, &scales, &biases, i2, group, bits),
                               reference(x2, i2, true)),
                1e-5f);
    }
  }
}

// gpt-oss's experts: MLX's mxfp4 (E8M0 scales, no biases), decode's few rows and prefill's
// many (their weight rows decoded a tile of 32 at a time, several tiles to a task's
// columns), K a multiple of 32 but not of 64.
TEST_P(GatherMatmul, Mxfp4ExpertsMatchGatherQmm) {
  uint64_t seed = 300;
  for (int K : {96, 256}) {
    SCOPED_TRACE("K " + std::to_string(K));
    const int N = 300;
    const auto parts = mx::quantize(random({kExperts, N, K}, seed++), 32, 4, "mxfp4");
    const auto &w = parts[0], &scales = parts[1];
    auto reference = [&](const mx::array& x, const mx::array& idx, bool sorted) {
      return mx::gather_qmm(x, w, scales, std::nullopt, std::nullopt, idx, true, 32, 4, "mxfp4",
                            std::nullopt, sorted);
    };
    const auto x1 = random({2, 3, 1, 1, K}, seed++);
    const auto i1 = expert_indices({2, 3, 4}, seed++, false);
    ASSERT_TRUE(gather_matmul_supported(x1, w, &scales, nullptr, i1, 32, 4,
                                        mx::default_stream(mx::Device::cpu)));
    EXPECT_LE(
        relative_error(gather_matmul(x1, w, &scales, nullptr, i1, 32, 4), reference(x1, i1, false)),
        1e-5f);
    const auto x2 = random({40, 1, K}, seed++);
    const auto i2 = expert_indices({40}, seed++, true);
    EXPECT_LE(
        relative_error(gather_matmul(x2, w, &scales, nullptr, i2, 32, 4), reference(x2, i2, true)),
        1e-5f);
  }
  // The smallest scales, 2^-127 and 2^-126 (E8M0 bytes 0 and 1: subnormal halves), and the
  // next, times inputs scaled to keep the products in range.
  const int K = 64, N = 8;
  const auto w = mx::quantize(random({kExperts, N, K}, seed++), 32, 4, "mxfp4")[0];
  const auto x = mx::multiply(random({4, 1, K}, seed++), mx::array(std::ldexp(1.0f, 120)));
  const auto idx = expert_indices({4}, seed++, false);
  for (int e : {0, 1, 2}) {
    SCOPED_TRACE("scale byte " + std::to_string(e));
    const auto scales = mx::full({kExperts, N, K / 32}, mx::array(e, mx::uint8));
    const auto ref = mx::gather_qmm(x, w, scales, std::nullopt, std::nullopt, idx, true, 32, 4,
                                    "mxfp4", std::nullopt, false);
    EXPECT_LE(relative_error(gather_matmul(x, w, &scales, nullptr, idx, 32, 4), ref), 1e-5f);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, GatherMatmul, kCpuIsas, isa_name);

TEST(GatherMatmulOperands, LeavesOtherFormsToMlx) {
  const auto cpu = mx::default_stream(mx::Device::cpu);
  const auto x = random({4, 1, 64}, 7);
  const auto idx = expert_indices({4}, 8, false);
  const auto parts = mx::quantize(random({kExperts, 16, 64}, 9), 32, 4);
  const auto &w = parts[0], &s = parts[1], &b = parts[2];
  EXPECT_TRUE(gather_matmul_supported(x, w, &s, &b, idx, 32, 4, cpu));
  EXPECT_FALSE(gather_matmul_supported(x, w, &s, nullptr, idx, 32, 4, cpu));  // no biases
  EXPECT_FALSE(gather_matmul_supported(x, w, &s, &b, idx, 32, 3, cpu));       // 3 bits
  EXPECT_FALSE(gather_matmul_supported(mx::astype(x, mx::float16), w, &s, &b, idx, 32, 4, cpu));
  EXPECT_FALSE(gather_matmul_supported(x, w, &s, &b, mx::astype(idx, mx::int32), 32, 4, cpu));
  EXPECT_FALSE(gather_matmul_supported(random({4, 2, 64}, 10), w, &s, &b, idx, 32, 4, cpu));
  EXPECT_FALSE(gather_matmul_supported(random({5, 1, 64}, 11), w, &s, &b, idx, 32, 4, cpu));
  // MXFP4 in groups of 32 only; nvfp4's groups of 16 (E4M3 scales) are MLX's.
  const auto fp4 = mx::quantize(random({kExperts, 16, 64}, 12), 32, 4, "mxfp4");
  EXPECT_TRUE(gather_matmul_supported(x, fp4[0], &fp4[1], nullptr, idx, 32, 4, cpu));
  const auto nv = mx::quantize(random({kExperts, 16, 64}, 13), 16, 4, "nvfp4");
  EXPECT_FALSE(gather_matmul_supported(x, nv[0], &nv[1], nullptr, idx, 16, 4, cpu));
}

}  // namespace
