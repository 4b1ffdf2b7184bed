#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include "heron/cache/kv_cache.h"
#include "heron/core/error.h"

namespace mx = mlx::core;
using heron::cache::KVCache;

namespace {

mx::array random_kv(int len, int seed) {
  return mx::random::normal({1, 2, len, 8}, mx::float32, 0.0f, 1.0f, mx::random::key(seed));
}

bool same(const mx::array& a, const mx::array& b) {
  return a.shape() == b.shape() && mx::array_equal(a, b).item<bool>();
}

}  // namespace

TEST(KVCache, AppendsAcrossGrowthStepsLikeConcatenation) {
  KVCache cache;
  std::vector<mx::array> ks, vs;
  // Chunks that cross the 256-token growth boundary more than once.
  for (int len : {5, 250, 1, 300, 1, 1}) {
    auto k = random_kv(len, static_cast<int>(ks.size()) * 2);
    auto v = random_kv(len, static_cast<int>(ks.size()) * 2 + 1);
    ks.push_back(k);
    vs.push_back(v);
    auto history = cache.update(k, v);
    EXPECT_TRUE(same(history.keys, mx::concatenate(ks, 2)));
    EXPECT_TRUE(same(history.values, mx::concatenate(vs, 2)));
  }
  EXPECT_EQ(cache.offset(), 558);
  EXPECT_EQ(cache.capacity() % KVCache::kStep, 0);
  EXPECT_GE(cache.capacity(), 558);
}

TEST(KVCache, RewindThenOverwrite) {
  KVCache cache;
  auto a = random_kv(10, 1);
  cache.update(a, a);
  cache.rewind(4);
  EXPECT_EQ(cache.offset(), 6);
  auto b = random_kv(3, 2);
  auto history = cache.update(b, b);
  auto expected = mx::concatenate({mx::slice(a, {0, 0, 0, 0}, {1, 2, 6, 8}), b}, 2);
  EXPECT_TRUE(same(history.keys, expected));
  EXPECT_THROW(cache.rewind(10), heron::Error);
}

// A long prompt after a rewind to a short shared prefix: the stale tail is dropped, so
// the new block must be sized from the kept prefix, not from the old capacity.
TEST(KVCache, RewindToShortPrefixThenLongPrompt) {
  KVCache cache;
  auto k0 = random_kv(260, 1), v0 = random_kv(260, 2);
  cache.update(k0, v0);
  cache.rewind(259);
  auto k1 = random_kv(514, 3), v1 = random_kv(514, 4);
  auto history = cache.update(k1, v1);
  auto first = [](const mx::array& a) { return mx::slice(a, {0, 0, 0, 0}, {1, 2, 1, 8}); };
  EXPECT_TRUE(same(history.keys, mx::concatenate({first(k0), k1}, 2)));
  EXPECT_TRUE(same(history.values, mx::concatenate({first(v0), v1}, 2)));
  EXPECT_EQ(cache.offset(), 515);
  EXPECT_GE(cache.capacity(), 515);
}
