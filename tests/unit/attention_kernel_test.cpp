// heron::kernels::scaled_dot_product_attention against
// mx::fast::scaled_dot_product_attention (the reference): both CPU
// implementations (AVX2 and scalar), decode and prefill, causal or not, a
// prefill continuing after a cached prefix, GQA ratios, head dims, batches,
// and keys/values read as strided slices of a larger cache buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "heron/kernels/attention.h"
#include "heron/kernels/sdpa_cpu.h"

namespace {

namespace mx = mlx::core;
using heron::kernels::Isa;

mx::array random(const mx::Shape& shape, uint64_t seed) {
  auto x = mx::random::normal(shape, mx::float32, 0.0f, 1.0f, mx::random::key(seed));
  mx::eval(x);
  return x;
}

// max |ours - ref| over max |ref|.
float relative_error(const mx::array& q, const mx::array& k, const mx::array& v, bool causal) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(q.shape(3)));
  auto ref = mx::fast::scaled_dot_product_attention(q, k, v, scale, causal ? "causal" : "");
  auto ours = heron::kernels::scaled_dot_product_attention(q, k, v, scale, causal);
  EXPECT_STREQ(ours.primitive().name(), "HeronScaledDotProductAttention");  // not the fallback
  mx::eval(ref, ours);
  EXPECT_EQ(ours.shape(), ref.shape());
  EXPECT_EQ(ours.dtype(), ref.dtype());
  const float norm = mx::max(mx::abs(ref)).item<float>();
  const float err = mx::max(mx::abs(mx::subtract(ours, ref))).item<float>();
  return err / std::max(norm, 1e-30f);
}

struct Case {
  int B, Hkv, G, L, T, D;
  bool causal;
};

std::string describe(const Case& c) {
  return "B " + std::to_string(c.B) + " Hkv " + std::to_string(c.Hkv) + " G " +
         std::to_string(c.G) + " L " + std::to_string(c.L) + " T " + std::to_string(c.T) + " D " +
         std::to_string(c.D) + (c.causal ? " causal" : "");
}

float relative_error(const Case& c, uint64_t seed) {
  auto q = random({c.B, c.Hkv * c.G, c.L, c.D}, seed);
  auto k = random({c.B, c.Hkv, c.T, c.D}, seed + 1);
  auto v = random({c.B, c.Hkv, c.T, c.D}, seed + 2);
  return relative_error(q, k, v, c.causal);
}

// Runs the body once per CPU implementation and restores the automatic pick. These
// are CPU kernels: the CPU is the default device for the test even in a GPU build.
class AttentionKernel : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    device_ = mx::default_device();
    mx::set_default_device(mx::Device::cpu);
    heron::kernels::set_sdpa_isa(GetParam());
  }
  void TearDown() override {
    heron::kernels::set_sdpa_isa(Isa::Auto);
    mx::set_default_device(device_);
  }
  mx::Device device_ = mx::Device::cpu;
};

constexpr float kTol = 1e-5f;

TEST_P(AttentionKernel, DecodeMatchesMlx) {
  uint64_t seed = 1;
  for (int T : {1, 7, 40, 257, 1000}) {
    for (int G : {1, 3, 4}) {
      for (int D : {64, 128}) {
        for (int B : {1, 2}) {
          for (bool causal : {false, true}) {  // one query sees every key either way
            const Case c{B, 3, G, 1, T, D, causal};
            SCOPED_TRACE(describe(c));
            EXPECT_LE(relative_error(c, seed += 3), kTol);
          }
        }
      }
    }
  }
}

TEST_P(AttentionKernel, PrefillMatchesMlx) {
  uint64_t seed = 100;
  for (int T : {1, 7, 40, 257}) {
    for (int G : {1, 3, 4}) {
      for (int D : {64, 128}) {
        for (bool causal : {true, false}) {
          const Case c{T == 40 ? 2 : 1, 2, G, T, T, D, causal};
          SCOPED_TRACE(describe(c));
          EXPECT_LE(relative_error(c, seed += 3), kTol);
        }
      }
    }
  }
}

TEST_P(AttentionKernel, LongPrefillMatchesMlx) {
  for (const Case& c :
       {Case{1, 1, 3, 1000, 1000, 64, true}, Case{1, 1, 2, 1000, 1000, 128, false}}) {
    SCOPED_TRACE(describe(c));
    EXPECT_LE(relative_error(c, 200), kTol);
  }
}

TEST_P(AttentionKernel, ContinuesAfterCachedPrefix) {
  uint64_t seed = 300;
  // L < T: the causal mask is aligned to the end of the keys. Few rows and
  // many keys also exercise splitting the keys across threads.
  for (const Case& c : {Case{1, 3, 3, 5, 300, 64, true}, Case{2, 1, 4, 5, 300, 128, true},
                        Case{1, 1, 1, 5, 1000, 64, true}, Case{1, 3, 3, 70, 1000, 64, true},
                        Case{1, 3, 3, 5, 300, 64, false}}) {
    SCOPED_TRACE(describe(c));
    EXPECT_LE(relative_error(c, seed += 3), kTol);
  }
}

TEST_P(AttentionKernel, ReadsStridedInputs) {
  // Keys/values as the KV cache hands them over: the first T positions of a
  // [B, H, capacity, D] buffer; queries as the attention layer makes them:
  // [B, L, H, D] transposed to [B, H, L, D].
  const int B = 2, Hkv = 3, G = 3, D = 64, cap = 512;
  auto kbuf = random({B, Hkv, cap, D}, 400);
  auto vbuf = random({B, Hkv, cap, D}, 401);
  for (int T : {1, 40, 257}) {
    for (int L : {1, std::min(T, 9)}) {
      SCOPED_TRACE("T " + std::to_string(T) + " L " + std::to_string(L));
      auto k = mx::slice(kbuf, {0, 0, 0, 0}, {B, Hkv, T, D});
      auto v = mx::slice(vbuf, {0, 0, 0, 0}, {B, Hkv, T, D});
      auto q = mx::transpose(random({B, L, Hkv * G, D}, 402), {0, 2, 1, 3});
      EXPECT_LE(relative_error(q, k, v, L > 1), kTol);
    }
  }
  // A strided last axis (every other element) is gathered first.
  auto wide = random({1, 3, 40, 2 * D}, 403);
  auto kv = mx::slice(wide, {0, 0, 0, 0}, {1, 3, 40, 2 * D}, {1, 1, 1, 2});
  EXPECT_LE(relative_error(random({1, 9, 4, D}, 404), kv, kv, true), kTol);
}

TEST_P(AttentionKernel, ComposesWithOtherOps) {
  auto q = random({1, 4, 6, 64}, 500);
  auto k = random({1, 2, 6, 64}, 501);
  auto v = random({1, 2, 6, 64}, 502);
  // Two chained attentions evaluated as one graph.
  auto ref = mx::fast::scaled_dot_product_attention(q, k, v, 0.125f, "causal");
  ref = mx::fast::scaled_dot_product_attention(mx::tanh(ref), k, v, 0.125f, "causal");
  auto ours = heron::kernels::scaled_dot_product_attention(q, k, v, 0.125f, true);
  ours = heron::kernels::scaled_dot_product_attention(mx::tanh(ours), k, v, 0.125f, true);
  EXPECT_TRUE(mx::allclose(ours, ref, 1e-5, 1e-5).item<bool>());
}

INSTANTIATE_TEST_SUITE_P(AttentionCpu, AttentionKernel, ::testing::Values(Isa::Avx2, Isa::Scalar),
                         [](const auto& p) {
                           return std::string(p.param == Isa::Avx2 ? "Avx2" : "Scalar");
                         });

// Shapes and dtypes the kernel does not take go to MLX, with MLX's results.
TEST(AttentionKernelFallback, LeavesOtherDtypesHeadDimsAndLongCausalQueriesToMlx) {
  auto check = [](const mx::array& q, const mx::array& k, const mx::array& v, bool causal) {
    auto ref = mx::fast::scaled_dot_product_attention(q, k, v, 0.25f, causal ? "causal" : "");
    auto ours = heron::kernels::scaled_dot_product_attention(q, k, v, 0.25f, causal);
    EXPECT_STRNE(ours.primitive().name(), "HeronScaledDotProductAttention");
    EXPECT_EQ(ours.dtype(), ref.dtype());
    EXPECT_TRUE(mx::array_equal(ours, ref).item<bool>());
  };
  auto half = [](const mx::array& a) { return mx::astype(a, mx::float16); };
  check(half(random({1, 2, 3, 64}, 600)), half(random({1, 2, 5, 64}, 601)),
        half(random({1, 2, 5, 64}, 602)), true);
  check(random({1, 2, 3, 20}, 603), random({1, 2, 5, 20}, 604), random({1, 2, 5, 20}, 605), false);
  // More queries than keys: MLX leaves the first rows without a visible key.
  check(random({1, 2, 7, 64}, 606), random({1, 2, 3, 64}, 607), random({1, 2, 3, 64}, 608), true);
}

}  // namespace
