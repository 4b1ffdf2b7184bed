// heron::kernels::scaled_dot_product_attention against
// mx::fast::scaled_dot_product_attention (the reference): both CPU
// implementations (AVX2 and scalar), decode and prefill, causal or not, a
// prefill continuing after a cached prefix, GQA ratios, head dims, batches,
// and keys/values read as strided slices of a larger cache buffer. Then Gemma 3's
// head_dim 256 through the attention layer's path on the default device (the GPU in
// a CUDA build) in the tests' compute type, against float32 attention on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "cpu_isa_test.h"

#include "heron/cache/kv_cache.h"
#include "heron/cache/rotating_kv_cache.h"
#include "heron/kernels/attention.h"
#include "heron/kernels/sdpa_cpu.h"
#include "heron/model/layers/attention.h"
#include "test_precision.h"

namespace {

namespace mx = mlx::core;

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

class AttentionKernel : public CpuIsaTest<heron::kernels::set_sdpa_isa> {};

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

// Latent attention's shapes: one kv head read by every query head, values narrower than
// the keys and read in place as their first columns (a latent cache's rows hold the
// latent, then the rotary key). Decode with the keys split across threads, causal
// prefill, and a prefill after a cached prefix.
TEST_P(AttentionKernel, ValuesOfTheirOwnWidthMatchMlx) {
  const int D = 80, Dv = 64, G = 8;
  for (const auto& [L, T] : {std::pair{1, 1000}, {257, 257}, {5, 300}}) {
    SCOPED_TRACE("L " + std::to_string(L) + " T " + std::to_string(T));
    auto rows = random({1, 1, T, D}, 600 + T);
    auto values = mx::slice(rows, {0, 0, 0, 0}, {1, 1, T, Dv});
    EXPECT_LE(relative_error(random({1, G, L, D}, 700 + L), rows, values, L > 1), kTol);
  }
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

// Attention sinks (gpt-oss): one more logit per head in each row's softmax, with no value.
// Sinks of log(T) + N(0, 4^2) against T scores of N(0, 1) take most of some rows' weight
// and little of others'. Causal prefill, decode with the keys split across threads (the sink
// counted once), and a mask.
TEST_P(AttentionKernel, SinksMatchMlx) {
  auto check = [](const Case& c, uint64_t seed, bool masked) {
    SCOPED_TRACE(describe(c) + (masked ? " masked" : ""));
    const int Hq = c.Hkv * c.G;
    auto q = random({c.B, Hq, c.L, c.D}, seed);
    auto k = random({c.B, c.Hkv, c.T, c.D}, seed + 1);
    auto v = random({c.B, c.Hkv, c.T, c.D}, seed + 2);
    // A head's sink weighs like log(T) keys' worth of its N(0, 1) scores, give or take.
    auto sinks = mx::add(mx::multiply(random({Hq}, seed + 3), mx::array(4.0f)),
                         mx::array(std::log(static_cast<float>(c.T))));
    const float scale = 0.125f;
    auto mask = mx::less(random({c.L, c.T}, seed + 4), mx::array(0.5f));
    // Every row sees its last key, as the kernel requires.
    mask = mx::logical_or(mask, mx::equal(mx::arange(c.T), mx::array(c.T - 1)));
    auto ref = masked ? mx::fast::scaled_dot_product_attention(q, k, v, scale, "", mask, sinks)
                      : mx::fast::scaled_dot_product_attention(q, k, v, scale,
                                                               c.causal ? "causal" : "", {}, sinks);
    auto ours =
        masked ? heron::kernels::masked_scaled_dot_product_attention(q, k, v, scale, mask, sinks)
               : heron::kernels::scaled_dot_product_attention(q, k, v, scale, c.causal, sinks);
    EXPECT_STREQ(ours.primitive().name(), "HeronScaledDotProductAttention");
    auto plain = heron::kernels::scaled_dot_product_attention(q, k, v, scale, c.causal);
    const float norm = mx::max(mx::abs(ref)).item<float>();
    EXPECT_LE(mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / norm, kTol);
    // The sinks change the result: a kernel that ignored them would fail above.
    EXPECT_GT(mx::max(mx::abs(mx::subtract(plain, ref))).item<float>() / norm, 0.05f);
  };
  check(Case{1, 2, 2, 9, 9, 64, true}, 700, false);
  check(Case{2, 2, 4, 1, 1000, 64, true}, 710, false);
  check(Case{1, 1, 3, 5, 300, 64, true}, 720, false);
  check(Case{1, 2, 2, 4, 40, 64, false}, 730, true);
}

INSTANTIATE_TEST_SUITE_P(AttentionCpu, AttentionKernel, kCpuIsas, isa_name);

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

// Gemma 3 270M's attention: 4 query heads on one kv head of 256 (MLX 0.32.4's fused CUDA
// kernels stop at 128, so on a GPU every case below is MLX's composed fallback), scale
// 1/sqrt(256), sliding windows of 512 in rings of 512 + 256. model::attend (the attention
// layer's own path) over each cache's history, in HERON_TEST_DTYPE on the default device,
// against float32 attention on the CPU in plain loops over every key in position order
// (query p sees keys (p - window, p]). On a CPU build the window and slack shrink to 32
// and 16 (MLX's CPU matmul, which the masked cases use, is slow); the schedule of
// prefills, chunks and steps is the same.
class HeadDim256 {
 public:
  static constexpr int kHeads = 4, kKvHeads = 1, kHeadDim = 256;
  static constexpr float kScale = 0.0625f;

  HeadDim256(heron::cache::Cache& cache, int window, uint64_t seed)
      : cache_(cache), window_(window), seed_(seed) {}

  // The next n positions: their keys and values into the cache, their n queries through
  // model::attend; the relative error of its output, max |ours - ref| / max |ref| (not
  // computed when check is false).
  float step(int n, bool check = true) {
    const auto cpu = mx::Device::cpu;
    const auto dtype = heron::test::test_precision().dtype;
    // [1, n, heads, D] as the layer's projection makes them, seen as [1, heads, n, D];
    // the reference reads the same values, rounded to dtype, as floats in [n, heads, D].
    auto make = [&](int heads, std::vector<float>* exact) {
      auto x = mx::random::normal({1, n, heads, kHeadDim}, mx::float32, 0.0f, 1.0f,
                                  mx::random::key(seed_++), cpu);
      auto low = mx::astype(x, dtype);
      auto back = mx::flatten(mx::astype(low, mx::float32, cpu), cpu);
      mx::eval(low, back);
      exact->insert(exact->end(), back.data<float>(), back.data<float>() + back.size());
      return mx::transpose(low, {0, 2, 1, 3});
    };
    std::vector<float> q32;
    auto q = make(kHeads, &q32);
    auto k = make(kKvHeads, &keys_);
    auto v = make(kKvHeads, &values_);
    auto out = heron::model::attend(q, cache_.update(k, v), kScale, window_);
    const int first = at_;
    at_ += n;
    if (!check) return 0.0f;
    EXPECT_EQ(out.shape(), q.shape());
    EXPECT_EQ(out.dtype(), dtype);
    auto ours = mx::flatten(mx::astype(mx::transpose(out, {0, 2, 1, 3}), mx::float32), cpu);
    mx::eval(ours);
    const float* got = ours.data<float>();  // [n, heads, D]
    constexpr int G = kHeads / kKvHeads, D = kHeadDim;
    float err = 0.0f, norm = 0.0f;
    std::vector<float> scores, acc(D);
    for (int i = 0; i < n; ++i) {
      const int p = first + i;
      const int lo = window_ > 0 ? std::max(0, p - window_ + 1) : 0;
      for (int h = 0; h < kHeads; ++h) {
        const float* qi = &q32[(size_t(i) * kHeads + h) * D];
        const size_t kv = h / G;
        auto row = [&](const std::vector<float>& t, int j) {
          return &t[(size_t(j) * kKvHeads + kv) * D];
        };
        scores.assign(size_t(p + 1 - lo), 0.0f);
        float top = -INFINITY;
        for (int j = lo; j <= p; ++j) {
          const float* kj = row(keys_, j);
          float dot = 0.0f;
          for (int d = 0; d < D; ++d) dot += qi[d] * kj[d];
          scores[size_t(j - lo)] = dot * kScale;
          top = std::max(top, dot * kScale);
        }
        std::fill(acc.begin(), acc.end(), 0.0f);
        float sum = 0.0f;
        for (int j = lo; j <= p; ++j) {
          const float w = std::exp(scores[size_t(j - lo)] - top);
          sum += w;
          const float* vj = row(values_, j);
          for (int d = 0; d < D; ++d) acc[size_t(d)] += w * vj[d];
        }
        const float* o = got + (size_t(i) * kHeads + h) * D;
        for (int d = 0; d < D; ++d) {
          const float ref = acc[size_t(d)] / sum;
          err = std::max(err, std::abs(o[d] - ref));
          norm = std::max(norm, std::abs(ref));
        }
      }
    }
    worst_ = std::max(worst_, err / norm);
    return err / norm;
  }
  int offset() const { return at_; }
  float worst() const { return worst_; }

 private:
  heron::cache::Cache& cache_;
  int window_;
  uint64_t seed_;
  std::vector<float> keys_, values_;  // [position, kv head, D], every position in order
  int at_ = 0;
  float worst_ = 0.0f;
};

struct Gemma3Sizes {
  int window, slack;
};

Gemma3Sizes head_dim_256_sizes() {
  return mx::default_device() == mx::Device::cpu ? Gemma3Sizes{32, 16} : Gemma3Sizes{512, 256};
}

void report(const std::string& what, const HeadDim256& a) {
  std::cout << "  " << heron::test::test_precision().name << " on "
            << (mx::default_device() == mx::Device::cpu ? "cpu" : "gpu") << ", " << what
            << ": worst relative error " << a.worst() << "\n";
}

const float kHeadDim256Tol = heron::test::test_precision().logits_rel_tol;

// A sliding-window layer's ring: masked prefill before the wrap, single steps across it
// (masked once wrapped), a chunk that wraps it, a chunk longer than the ring.
TEST(AttentionHeadDim256, SlidingWindowRingMatchesFloat32OnTheCpu) {
  const auto [W, S] = head_dim_256_sizes();
  heron::cache::RotatingKVCache cache(W, S);
  HeadDim256 a(cache, W, 1000);
  EXPECT_LE(a.step(W + S / 4), kHeadDim256Tol) << "prefill past the window";
  EXPECT_LE(a.step(S / 2), kHeadDim256Tol) << "chunk before the wrap";
  while (a.offset() < W + S + 4) {
    ASSERT_LE(a.step(1), kHeadDim256Tol) << "decode at " << a.offset();
  }
  EXPECT_LE(a.step(S / 4), kHeadDim256Tol) << "chunk in the wrapped ring";
  EXPECT_LE(a.step(W + S + W / 2), kHeadDim256Tol) << "chunk longer than the ring";
  for (int i = 0; i < 3; ++i) ASSERT_LE(a.step(1), kHeadDim256Tol) << "decode at " << a.offset();
  report("sliding ring", a);
}

// A global layer's cache (plain causal attention), and a window cut from a full cache.
TEST(AttentionHeadDim256, FullCacheMatchesFloat32OnTheCpu) {
  const auto [W, S] = head_dim_256_sizes();
  {
    heron::cache::KVCache cache;
    HeadDim256 a(cache, 0, 2000);
    EXPECT_LE(a.step(W), kHeadDim256Tol) << "causal prefill";
    EXPECT_LE(a.step(S / 2), kHeadDim256Tol) << "causal chunk after a prefix";
    for (int i = 0; i < 3; ++i) ASSERT_LE(a.step(1), kHeadDim256Tol) << "decode at " << a.offset();
    a.step(3 * W, /*check=*/false);
    for (int i = 0; i < 3; ++i) ASSERT_LE(a.step(1), kHeadDim256Tol) << "decode at " << a.offset();
    report("full cache", a);
  }
  {
    heron::cache::KVCache cache;
    HeadDim256 a(cache, W, 3000);
    EXPECT_LE(a.step(W + S / 2), kHeadDim256Tol) << "windowed prefill";
    for (int i = 0; i < 3; ++i) ASSERT_LE(a.step(1), kHeadDim256Tol) << "decode at " << a.offset();
    EXPECT_LE(a.step(8), kHeadDim256Tol) << "windowed chunk";
    report("window over a full cache", a);
  }
}

}  // namespace
