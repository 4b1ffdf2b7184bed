// engine::generate with a kept PrefixCache: prefix reuse, cancellation between prefill
// chunks, the callback's stop, and the per-request context length.
#include <gtest/gtest.h>

#include "heron/core/error.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"

using heron::cache::PrefixCache;
using heron::engine::GenerateOptions;
using heron::engine::Next;
using heron::engine::TokenStep;

namespace {

class GenerateSession : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new heron::model::LoadedModel(
        heron::model::load_model(HERON_FIXTURES "/models/tiny-llama"));
  }
  static void TearDownTestSuite() { delete loaded_; }

  std::unique_ptr<PrefixCache> fresh() {
    return std::make_unique<PrefixCache>(loaded_->model->make_caches(),
                                         heron::cache::PrefixCacheOptions{});
  }

  static std::vector<int> prompt(int n, int salt = 0) {
    std::vector<int> p;
    for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + salt) % 400);
    return p;
  }

  static GenerateOptions greedy(int max_tokens) {
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.ignore_eos = true;
    o.sampling.temperature = 0;
    return o;
  }

  std::vector<int> run(PrefixCache& seq, const std::vector<int>& p, const GenerateOptions& o,
                       heron::engine::GenerateStats* stats = nullptr) {
    std::vector<int> out;
    auto s = heron::engine::generate(*loaded_->model, seq, p, o, [&](const TokenStep& t) {
      out.push_back(t.id);
      return Next::Continue;
    });
    if (stats) *stats = s;
    return out;
  }

  static heron::model::LoadedModel* loaded_;
};

heron::model::LoadedModel* GenerateSession::loaded_ = nullptr;

}  // namespace

TEST_F(GenerateSession, ReusesTheLongestCommonPrefix) {
  auto seq = fresh();
  heron::engine::GenerateStats stats;
  const auto p = prompt(30);
  const auto first = run(*seq, p, greedy(5), &stats);
  EXPECT_EQ(stats.cached_tokens, 0);
  EXPECT_EQ(seq->live_length(), seq->caches()[0]->offset());
  // Same prompt: everything but the last token is reused, and the output is the same.
  EXPECT_EQ(run(*seq, p, greedy(5), &stats), first);
  EXPECT_EQ(stats.cached_tokens, 29);
  EXPECT_EQ(stats.prompt_tokens, 30);
  // A branch after 10 tokens reuses exactly those, and matches a cold run.
  auto branch = prompt(10);
  auto tail = prompt(15, 1);
  branch.insert(branch.end(), tail.begin(), tail.end());
  const auto warm = run(*seq, branch, greedy(5), &stats);
  EXPECT_EQ(stats.cached_tokens, 10);
  auto cold_seq = fresh();
  EXPECT_EQ(run(*cold_seq, branch, greedy(5)), warm);
}

TEST_F(GenerateSession, CancelsBetweenPrefillChunks) {
  auto seq = fresh();
  auto o = greedy(5);
  o.prefill_chunk = 8;
  int polls = 0;
  o.cancelled = [&] { return ++polls >= 2; };
  heron::engine::GenerateStats stats;
  EXPECT_TRUE(run(*seq, prompt(50), o, &stats).empty());
  EXPECT_EQ(stats.done_reason, "cancelled");
  EXPECT_EQ(seq->live_length(), 8);  // one chunk ran; the cache knows exactly that
  EXPECT_EQ(seq->caches()[0]->offset(), 8);
  // The next request reuses the chunk that did run.
  run(*seq, prompt(50), greedy(2), &stats);
  EXPECT_EQ(stats.cached_tokens, 8);
}

TEST_F(GenerateSession, CallbackStopsAndContextLimits) {
  auto seq = fresh();
  int seen = 0;
  auto stats = heron::engine::generate(
      *loaded_->model, *seq, prompt(5), greedy(50),
      [&](const TokenStep&) { return ++seen == 3 ? Next::Stop : Next::Continue; });
  EXPECT_EQ(stats.done_reason, "stop");
  EXPECT_EQ(seen, 3);
  auto o = greedy(-1);  // until the context is full
  o.context_length = 20;
  run(*seq, prompt(12), o, &stats);
  EXPECT_EQ(stats.decode_tokens, 8);
  EXPECT_EQ(stats.done_reason, "length");
  EXPECT_THROW(run(*seq, prompt(20), o), heron::Error);  // at the limit: no room
}
