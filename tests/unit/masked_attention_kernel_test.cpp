// heron::kernels::masked_scaled_dot_product_attention against
// mx::fast::scaled_dot_product_attention with the same boolean mask (the reference):
// both CPU implementations, decode (one query, keys split across threads) and prefill,
// random masks, a sliding window's ring (keys in slot order, a cyclic band visible) and
// a band over keys in order, Gemma 3's shapes (head_dim 256, 4 query heads on 1 kv head);
// and padded_scaled_dot_product_attention against the mask its key lengths mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mlx/mlx.h>
#include <mlx/primitives.h>

#include "cpu_isa_test.h"

#include "heron/kernels/attention.h"
#include "heron/kernels/sdpa_cpu.h"

namespace {

namespace mx = mlx::core;

// max |ours - ref| over max |ref|, with q [B, Hq, L, D], k/v [B, Hkv, T, D].
float relative_error(int B, int Hq, int Hkv, int D, const mx::array& mask, uint64_t seed) {
  const int L = mask.shape(0), T = mask.shape(1);
  auto q = random({B, Hq, L, D}, seed);
  auto k = random({B, Hkv, T, D}, seed + 1);
  auto v = random({B, Hkv, T, D}, seed + 2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  auto ref = mx::fast::scaled_dot_product_attention(q, k, v, scale, "", mask);
  auto ours = heron::kernels::masked_scaled_dot_product_attention(q, k, v, scale, mask);
  EXPECT_STREQ(ours.primitive().name(), "HeronScaledDotProductAttention");  // not the fallback
  mx::eval(ref, ours);
  EXPECT_EQ(ours.shape(), ref.shape());
  const float norm = mx::max(mx::abs(ref)).item<float>();
  const float err = mx::max(mx::abs(mx::subtract(ours, ref))).item<float>();
  return err / std::max(norm, 1e-30f);
}

// Random visibility, at least one visible key per query.
mx::array random_mask(int L, int T, float keep, uint64_t seed) {
  auto m = mx::less(mx::random::uniform({L, T}, mx::random::key(seed)), mx::array(keep));
  auto first = mx::equal(mx::arange(T), mx::array(static_cast<int>(seed % T)));
  m = mx::logical_or(m, mx::broadcast_to(mx::reshape(first, {1, T}), {L, T}));
  mx::eval(m);
  return m;
}

// A ring of `slots` keys holding positions [end - slots, end) in slot order (position p
// in slot p % slots); queries at positions end - L .. end - 1 see the `window` positions
// up to their own.
mx::array ring_mask(int L, int slots, int end, int window) {
  std::vector<char> flags(static_cast<size_t>(L) * slots);
  for (int i = 0; i < L; ++i) {
    const int query = end - L + i;
    for (int slot = 0; slot < slots; ++slot) {
      // The position this slot holds: the latest p < end with p % slots == slot.
      const int p = end - 1 - ((end - 1 - slot) % slots + slots) % slots;
      flags[static_cast<size_t>(i) * slots + slot] = p <= query && p > query - window;
    }
  }
  auto m = mx::astype(
      mx::array(reinterpret_cast<const uint8_t*>(flags.data()), {L, slots}, mx::uint8), mx::bool_);
  mx::eval(m);
  return m;
}

class MaskedAttentionKernel : public CpuIsaTest<heron::kernels::set_sdpa_isa> {};

constexpr float kTol = 1e-5f;

TEST_P(MaskedAttentionKernel, RandomMasksMatchMlx) {
  uint64_t seed = 1;
  struct Case {
    int B, Hq, Hkv, D, L, T;
    float keep;
  };
  for (auto c : {Case{1, 4, 1, 256, 1, 768, 0.5f}, Case{1, 4, 1, 256, 7, 300, 0.3f},
                 Case{2, 8, 2, 64, 37, 130, 0.5f}, Case{1, 4, 2, 64, 130, 200, 0.05f},
                 Case{1, 2, 1, 32, 1, 4096, 0.01f}}) {
    SCOPED_TRACE("B " + std::to_string(c.B) + " Hq " + std::to_string(c.Hq) + " L " +
                 std::to_string(c.L) + " T " + std::to_string(c.T));
    EXPECT_LE(relative_error(c.B, c.Hq, c.Hkv, c.D, random_mask(c.L, c.T, c.keep, seed), seed + 1),
              kTol);
    seed += 4;
  }
}

TEST_P(MaskedAttentionKernel, SlidingWindowRingMatchesMlx) {
  // Gemma 3: window 512 in a ring of 768 slots; decode steps and chunks after the wrap.
  for (int end : {769, 1000, 1535, 5000}) {
    for (int L : {1, 3, 64, 200}) {
      SCOPED_TRACE("end " + std::to_string(end) + " L " + std::to_string(L));
      EXPECT_LE(relative_error(1, 4, 1, 256, ring_mask(L, 768, end, 512), 40 + end + L), kTol);
    }
  }
}

TEST_P(MaskedAttentionKernel, BandOverKeysInOrderMatchesMlx) {
  // A chunk longer than the ring: the window before it, then the chunk, in order.
  const int window = 64, L = 300, T = window + L;
  std::vector<char> flags(static_cast<size_t>(L) * T);
  for (int i = 0; i < L; ++i) {
    for (int j = 0; j < T; ++j) flags[static_cast<size_t>(i) * T + j] = j <= window + i && j > i;
  }
  auto mask = mx::astype(
      mx::array(reinterpret_cast<const uint8_t*>(flags.data()), {L, T}, mx::uint8), mx::bool_);
  EXPECT_LE(relative_error(1, 4, 1, 256, mask, 90), kTol);
}

TEST_P(MaskedAttentionKernel, ReadsABroadcastMask) {
  // One row of flags broadcast to every query: a strided mask is copied, not misread.
  auto row = mx::reshape(random_mask(1, 257, 0.4f, 7), {1, 257});
  auto mask = mx::broadcast_to(row, {5, 257});
  EXPECT_LE(relative_error(1, 4, 1, 64, mask, 11), kTol);
}

// A batch of texts of different lengths, right-padded (an encoder's batch): row b sees
// its first key_lengths[b] keys, the reference the same through a [B, 1, 1, T] mask.
TEST_P(MaskedAttentionKernel, PaddedKeysMatchMlx) {
  uint64_t seed = 300;
  for (int T : {1, 9, 64, 300}) {
    for (int D : {32, 64}) {
      const int B = 5, H = 3;
      std::vector<int32_t> lengths(B);
      for (int b = 0; b < B; ++b) lengths[b] = std::max(1, T - b * (T / B + 1));
      const mx::array key_lengths(lengths.data(), {B}, mx::int32);
      auto q = random({B, H, T, D}, seed++);
      auto k = random({B, H, T, D}, seed++);
      auto v = random({B, H, T, D}, seed++);
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      auto real = mx::less(mx::reshape(mx::arange(T, mx::int32), {1, 1, 1, T}),
                           mx::reshape(key_lengths, {B, 1, 1, 1}));
      auto ref = mx::fast::scaled_dot_product_attention(q, k, v, scale, "", real);
      auto ours = heron::kernels::padded_scaled_dot_product_attention(q, k, v, scale, key_lengths);
      EXPECT_STREQ(ours.primitive().name(), "HeronScaledDotProductAttention");
      mx::eval(ref, ours);
      SCOPED_TRACE("T " + std::to_string(T) + " D " + std::to_string(D));
      const float norm = mx::max(mx::abs(ref)).item<float>();
      EXPECT_LE(mx::max(mx::abs(mx::subtract(ours, ref))).item<float>() / norm, kTol);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, MaskedAttentionKernel, kCpuIsas, isa_name);

TEST(MaskedAttentionFallback, LeavesOtherMaskShapesToMlx) {
  // A mask with batch and head axes is MLX's business.
  auto q = random({1, 2, 3, 32}, 1);
  auto k = random({1, 2, 9, 32}, 2);
  auto mask = mx::reshape(random_mask(3, 9, 0.5f, 3), {1, 1, 3, 9});
  auto ours = heron::kernels::masked_scaled_dot_product_attention(q, k, k, 0.2f, mask, std::nullopt,
                                                                  mx::Device::cpu);
  auto ref = mx::fast::scaled_dot_product_attention(q, k, k, 0.2f, "", mask);
  EXPECT_STRNE(ours.primitive().name(), "HeronScaledDotProductAttention");
  EXPECT_TRUE(mx::allclose(ours, ref, 1e-6, 1e-6).item<bool>());
}

}  // namespace
