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

// Segments: what the prefix cache saves from a live cache and loads back.
TEST(KVCache, SavedSegmentsLoadBackExactlyAfterTheBufferIsReused) {
  KVCache cache;
  auto k = random_kv(300, 1), v = random_kv(300, 2);
  cache.update(k, v);
  auto head = cache.save(0, 120);
  auto tail = cache.save(120, 300);
  mx::eval(tail->tensors());
  EXPECT_EQ(head->begin(), 0);
  EXPECT_EQ(tail->end(), 300);
  // The segments own their bytes (the allocator rounds a little), not the 512-position
  // buffer, which is 2.8 times as large.
  EXPECT_EQ(tail->nbytes(), size_t{2} * 180 * 2 * 8 * 4);
  EXPECT_LT(tail->tensors()[0].buffer_size(), tail->tensors()[0].nbytes() * 3 / 2);
  // The live buffer is overwritten after a rewind; the saved tail is not.
  cache.rewind(180);
  auto other = random_kv(180, 3);
  cache.update(other, other);
  cache.rewind(180);
  cache.load(*tail);
  auto history = cache.update(random_kv(1, 4), random_kv(1, 4));
  EXPECT_TRUE(same(mx::slice(history.keys, {0, 0, 0, 0}, {1, 2, 300, 8}), k));
  EXPECT_TRUE(same(mx::slice(history.values, {0, 0, 0, 0}, {1, 2, 300, 8}), v));
  // Loading needs the cache to stand exactly where the segment begins.
  EXPECT_THROW(cache.load(*head), heron::Error);
  EXPECT_THROW(cache.save(10, 400), heron::Error);
}

TEST(KVCache, SegmentsSplitAndMergeWithoutLosingAPosition) {
  KVCache cache;
  auto k = random_kv(50, 5), v = random_kv(50, 6);
  cache.update(k, v);
  auto whole = cache.save(10, 50);
  auto [upper, lower] = whole->split(30);
  EXPECT_EQ(upper->begin(), 10);
  EXPECT_EQ(upper->end(), 30);
  EXPECT_EQ(lower->begin(), 30);
  EXPECT_EQ(upper->nbytes() + lower->nbytes(), whole->nbytes());
  auto joined = upper->merge(*lower);
  EXPECT_TRUE(same(joined->tensors()[0], whole->tensors()[0]));
  EXPECT_TRUE(same(joined->tensors()[1], mx::slice(v, {0, 0, 10, 0}, {1, 2, 50, 8})));
  EXPECT_THROW(whole->split(10), heron::Error);
  EXPECT_THROW(whole->split(50), heron::Error);
  EXPECT_THROW(lower->merge(*upper), heron::Error);
}

TEST(KVCache, SegmentsRebuiltFromTensorsAreChecked) {
  KVCache cache;
  auto k = random_kv(20, 7);
  cache.update(k, k);
  auto saved = cache.save(5, 20);
  auto rebuilt = cache.segment_from(5, 20, saved->tensors());
  EXPECT_TRUE(same(rebuilt->tensors()[0], saved->tensors()[0]));
  EXPECT_THROW(cache.segment_from(5, 21, saved->tensors()), heron::Error);  // wrong length
  EXPECT_THROW(cache.segment_from(5, 20, {saved->tensors()[0]}), heron::Error);
  auto other_heads = random_kv(15, 8);
  other_heads = mx::concatenate({other_heads, other_heads}, 1);  // 4 heads, not 2
  EXPECT_THROW(cache.segment_from(5, 20, {other_heads, other_heads}), heron::Error);
  auto ints = mx::zeros({1, 2, 15, 8}, mx::int32);
  EXPECT_THROW(cache.segment_from(5, 20, {ints, ints}), heron::Error);
}
