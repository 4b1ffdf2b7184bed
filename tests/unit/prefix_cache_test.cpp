// The prefix cache through engine::generate on a tiny float32 model: every way a
// conversation comes back (a branch to an older one, regenerate, an edited earlier turn,
// a retry after a cancelled prefill, after eviction, from disk after a restart, past a
// corrupted file) gives exactly the greedy tokens of a cold run, reuses what it should,
// and keeps its byte accounting exact.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "heron/cache/prefix_cache.h"
#include "heron/engine/generator.h"
#include "heron/model/layer_caches.h"
#include "heron/model/loader.h"

namespace fs = std::filesystem;
using heron::cache::DiskTier;
using heron::cache::PrefixCache;
using heron::cache::PrefixCacheOptions;
using heron::engine::GenerateOptions;
using heron::engine::GenerateStats;
using heron::engine::Next;
using heron::engine::TokenStep;

namespace {

class PrefixCacheTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new heron::model::LoadedModel(
        heron::model::load_model(HERON_FIXTURES "/models/tiny-llama"));
  }
  static void TearDownTestSuite() { delete loaded_; }

  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("heron_prefix_cache_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<PrefixCache> make(size_t memory_budget, bool disk = false,
                                    size_t disk_budget = size_t{1} << 30) {
    PrefixCacheOptions o;
    o.memory_budget = memory_budget;
    if (disk) o.disk = std::make_shared<DiskTier>(dir_, "tiny-llama", disk_budget);
    return std::make_unique<PrefixCache>(loaded_->model->make_caches(), std::move(o));
  }

  // n tokens of a conversation: `salt` makes different text.
  static std::vector<int> text(int n, int salt) {
    std::vector<int> p;
    for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + salt * 131) % 400);
    return p;
  }
  static std::vector<int> join(std::vector<int> a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  static GenerateOptions greedy(int max_tokens, int chunk = 2048) {
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.ignore_eos = true;
    o.sampling.temperature = 0;
    o.prefill_chunk = chunk;
    return o;
  }

  static std::vector<int> run(PrefixCache& cache, const std::vector<int>& prompt,
                              GenerateStats* stats = nullptr, GenerateOptions o = greedy(6)) {
    std::vector<int> out;
    auto s = heron::engine::generate(*loaded_->model, cache, prompt, o, [&](const TokenStep& t) {
      out.push_back(t.id);
      return Next::Continue;
    });
    if (stats) *stats = s;
    cache.check_accounting();
    return out;
  }

  // The same prompt through a fresh cache.
  std::vector<int> cold(const std::vector<int>& prompt) {
    auto fresh = make(0);
    return run(*fresh, prompt);
  }

  static heron::model::LoadedModel* loaded_;
  fs::path dir_;
};

heron::model::LoadedModel* PrefixCacheTest::loaded_ = nullptr;

}  // namespace

TEST_F(PrefixCacheTest, BranchesBetweenConversationsThatShareASystemPrompt) {
  auto cache = make(size_t{1} << 30);
  const auto system = text(40, 0);
  std::vector<std::vector<int>> turns;
  for (int user = 1; user <= 3; ++user) turns.push_back(join(system, text(12, user)));
  GenerateStats stats;
  std::vector<std::vector<int>> answers;
  for (const auto& p : turns) {
    answers.push_back(run(*cache, p, &stats));
    EXPECT_EQ(answers.back(), cold(p));
  }
  EXPECT_EQ(stats.cached_tokens, 40);  // the third user found the shared system prompt
  // Back to the first conversation's second turn: its whole first turn and answer (but
  // the answer's last token, which was never fed) come from inactive snapshots.
  const auto second = join(join(turns[0], answers[0]), text(9, 7));
  EXPECT_EQ(run(*cache, second, &stats), cold(second));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(turns[0].size() + answers[0].size()) - 1);
  const auto s = cache->stats();
  EXPECT_GT(s.memory_bytes, 0u);
  EXPECT_EQ(s.lookups, 4u);
  EXPECT_EQ(s.hits, 3u);
}

TEST_F(PrefixCacheTest, RegenerateReusesAllButTheLastPromptToken) {
  auto cache = make(size_t{1} << 30);
  const auto p = text(57, 3);
  GenerateStats stats;
  const auto first = run(*cache, p, &stats);
  EXPECT_EQ(stats.cached_tokens, 0);
  EXPECT_EQ(run(*cache, p, &stats), first);
  EXPECT_EQ(stats.cached_tokens, 56);
  EXPECT_EQ(stats.prompt_tokens, 57);
}

TEST_F(PrefixCacheTest, EditingAnEarlierTurnReusesWhatCameBeforeIt) {
  auto cache = make(size_t{1} << 30);
  const auto head = text(30, 4);
  const auto original = join(join(head, text(20, 5)), text(15, 6));
  const auto edited = join(join(head, text(20, 8)), text(15, 6));
  run(*cache, original);
  GenerateStats stats;
  EXPECT_EQ(run(*cache, edited, &stats), cold(edited));
  EXPECT_GE(stats.cached_tokens, 30);
  EXPECT_LT(stats.cached_tokens, 50);
  // And back to the original, whose tail is now an inactive snapshot.
  EXPECT_EQ(run(*cache, original, &stats), cold(original));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(original.size()) - 1);
}

TEST_F(PrefixCacheTest, ARetryResumesWhereACancelledPrefillStopped) {
  auto cache = make(size_t{1} << 30);
  const auto p = text(90, 9);
  auto o = greedy(6, 16);
  int polls = 0;
  o.cancelled = [&] { return ++polls > 3; };
  GenerateStats stats;
  EXPECT_TRUE(run(*cache, p, &stats, o).empty());
  EXPECT_EQ(stats.done_reason, "cancelled");
  EXPECT_EQ(cache->live_length(), 48);
  EXPECT_EQ(run(*cache, p, &stats), cold(p));
  EXPECT_EQ(stats.cached_tokens, 48);
}

TEST_F(PrefixCacheTest, EvictionUnderATinyBudgetKeepsAnswersExact) {
  // Room for 1.5 conversations' inactive snapshots (55 positions each): the rest is
  // evicted, least recently used first, prompt-end restore points last.
  auto probe = make(size_t{1} << 30);
  run(*probe, text(50, 10));
  run(*probe, text(50, 11));
  const size_t one = probe->stats().memory_bytes;
  ASSERT_GT(one, 0u);
  auto cache = make(one + one / 2);
  std::vector<std::vector<int>> prompts;
  for (int c = 0; c < 6; ++c) prompts.push_back(join(text(20, 0), text(30, 20 + c)));
  for (const auto& p : prompts) {
    EXPECT_EQ(run(*cache, p), cold(p));
    EXPECT_LE(cache->stats().memory_bytes, one + one / 2);
  }
  // Each conversation's tail is a prompt-end node (positions 20..46) and its answer
  // (46..55). Answers go first, then the oldest prompt ends: the last three survive.
  GenerateStats stats;
  EXPECT_EQ(run(*cache, prompts[4], &stats), cold(prompts[4]));
  EXPECT_EQ(stats.cached_tokens, 46);
  EXPECT_EQ(run(*cache, prompts[0], &stats), cold(prompts[0]));
  EXPECT_EQ(stats.cached_tokens, 20);  // only the shared head is left of it
}

TEST_F(PrefixCacheTest, TheDiskTierSurvivesARestart) {
  const auto document = text(120, 12);
  std::vector<int> answer;
  {
    auto cache = make(0, /*disk=*/true);
    answer = run(*cache, document);
    cache->persist();
    EXPECT_GT(cache->stats().disk_bytes, 0u);
    cache->check_accounting();
  }
  auto restarted = make(0, /*disk=*/true);
  EXPECT_GT(restarted->stats().disk_bytes, 0u);
  restarted->check_accounting();
  GenerateStats stats;
  EXPECT_EQ(run(*restarted, document, &stats), answer);
  EXPECT_EQ(stats.cached_tokens, 116);  // the restore point 4 tokens before the end
  const auto question = join(document, text(10, 13));
  EXPECT_EQ(run(*restarted, question, &stats), cold(question));
  EXPECT_GE(stats.cached_tokens, 116);
}

TEST_F(PrefixCacheTest, ACorruptedOrTruncatedFileIsDeletedNeverTrusted) {
  const auto document = text(100, 14);
  {
    auto cache = make(0, /*disk=*/true);
    run(*cache, document);
    cache->persist();
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {  // one flipped payload byte: the checksum catches it
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(fs::file_size(f) - 3));
    io.put('\x7f');
  }
  auto restarted = make(0, /*disk=*/true);
  GenerateStats stats;
  EXPECT_EQ(run(*restarted, document, &stats), cold(document));
  EXPECT_EQ(stats.cached_tokens, 0);
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f)) << f;
  restarted->check_accounting();
  // A truncated file is dropped when the tier is opened.
  restarted->persist();
  restarted.reset();
  files.clear();
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
  ASSERT_FALSE(files.empty());
  fs::resize_file(files[0], fs::file_size(files[0]) / 2);
  auto again = make(0, /*disk=*/true);
  EXPECT_FALSE(fs::exists(files[0]));
  EXPECT_EQ(run(*again, document, &stats), cold(document));
}

TEST_F(PrefixCacheTest, AFailureForgetsOnlyTheLivePath) {
  auto cache = make(size_t{1} << 30);
  const auto a = join(text(30, 0), text(10, 15));
  const auto b = join(text(30, 0), text(10, 16));
  run(*cache, a);
  run(*cache, b);  // a's tail is now an inactive snapshot
  cache->drop_live();
  cache->check_accounting();
  EXPECT_EQ(cache->live_length(), 0);
  GenerateStats stats;
  EXPECT_EQ(run(*cache, a, &stats), cold(a));
  EXPECT_EQ(stats.cached_tokens, 0);  // its head was live, so it went with the failure
  EXPECT_EQ(run(*cache, b, &stats), cold(b));
}

TEST_F(PrefixCacheTest, MemoryAndDiskBudgetsTogether) {
  // 512 bytes a position: 64 KiB holds the shared head and two or three conversations.
  const size_t budget = size_t{64} << 10;
  auto cache = make(0, /*disk=*/true, budget);
  for (int c = 0; c < 8; ++c) {
    const auto p = join(text(25, 0), text(40, 30 + c));
    EXPECT_EQ(run(*cache, p), cold(p));
    cache->persist();
    const auto s = cache->stats();
    EXPECT_EQ(s.memory_bytes, 0u);
    EXPECT_LE(s.disk_bytes, budget);
  }
  // The oldest conversation's tail was evicted from disk; the newest is there.
  GenerateStats stats;
  const auto oldest = join(text(25, 0), text(40, 30));
  EXPECT_EQ(run(*cache, oldest, &stats), cold(oldest));
  EXPECT_EQ(stats.cached_tokens, 25);
  size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dir_)) on_disk += fs::file_size(e.path());
  EXPECT_EQ(on_disk, cache->stats().disk_bytes);
}

// Caches that forget: Gemma 3's sliding-window layers keep rings of window + 4 (8 + 4 on
// the tiny model), Qwen3-Next's linear-attention layers their states at the last 4
// offsets and at restore points. The trie restores a node only where every cache can
// hold its state, so a branch from deep in the live path starts over, while a return to a
// saved conversation restores its end from what its snapshot kept, and a restore point's
// capture serves a regenerate. Answers equal a cold run's throughout.
class ForgetfulPrefixCache : public ::testing::TestWithParam<std::string> {};

TEST_P(ForgetfulPrefixCache, RestoresOnlyWhereTheStatesWereKept) {
  auto loaded = heron::model::load_model(std::string(HERON_FIXTURES "/models/") + GetParam());
  const auto& model = *loaded.model;
  auto make = [&] {
    return std::make_unique<PrefixCache>(heron::model::make_layer_caches(model.config(), 4),
                                         PrefixCacheOptions{.memory_budget = size_t{1} << 30});
  };
  auto run = [&](PrefixCache& cache, const std::vector<int>& prompt, GenerateStats* stats,
                 int max_tokens = 6) {
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.ignore_eos = true;
    o.sampling.temperature = 0;
    std::vector<int> out;
    auto s = heron::engine::generate(model, cache, prompt, o, [&](const TokenStep& t) {
      out.push_back(t.id);
      return Next::Continue;
    });
    if (stats) *stats = s;
    cache.check_accounting();
    return out;
  };
  auto cold = [&](const std::vector<int>& prompt, int max_tokens = 6) {
    auto fresh = make();
    return run(*fresh, prompt, nullptr, max_tokens);
  };
  auto text = [](int n, int salt) {
    std::vector<int> p;
    for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + salt * 131) % 400);
    return p;
  };
  auto join = [](std::vector<int> a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  auto cache = make();
  GenerateStats stats;
  const auto system = text(40, 0);
  const auto first = join(system, text(12, 1));
  const auto answer = run(*cache, first, &stats);
  EXPECT_EQ(answer, cold(first));
  // Another conversation on the same system prompt: the caches have moved 17 positions
  // past its end (past the rings' slack and the states kept), so nothing there can be
  // restored.
  const auto other = join(system, text(12, 2));
  EXPECT_EQ(run(*cache, other, &stats), cold(other));
  EXPECT_EQ(stats.cached_tokens, 0);
  // The first conversation's next turn: its saved snapshot kept the state at its end, so
  // everything but the answer's last token comes back.
  const auto next = join(join(first, answer), text(9, 7));
  EXPECT_EQ(run(*cache, next, &stats, 3), cold(next, 3));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(first.size() + answer.size()) - 1);
  // Regenerating a short answer rolls the caches back within their slack; after a longer
  // one (6 positions back, past the slack) they go back to the restore point 4 tokens
  // before the prompt's end, whose state they captured as prefill crossed it.
  EXPECT_EQ(run(*cache, next, &stats), cold(next));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(next.size()) - 1);
  EXPECT_EQ(run(*cache, next, &stats), cold(next));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(next.size()) - 4);
  // Back to the other conversation: the snapshot of its restore point holds the state its
  // caches had moved past. A window's snapshot also holds the positions after it, so all
  // but one token return; a recurrent state was kept at the restore point alone, 4
  // tokens before the prompt's end.
  EXPECT_EQ(run(*cache, other, &stats), cold(other));
  const int recomputed = GetParam() == "tiny-qwen3-next" ? 4 : 1;
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(other.size()) - recomputed);
  // Regenerating that answer (6 tokens, past the slack) goes back to where the snapshot
  // restored: that state stayed held however far the answer went.
  EXPECT_EQ(run(*cache, other, &stats), cold(other));
  EXPECT_EQ(stats.cached_tokens, static_cast<int>(other.size()) - recomputed);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ForgetfulPrefixCache,
                         ::testing::Values("tiny-gemma3", "tiny-qwen3-next"));
