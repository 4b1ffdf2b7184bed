// engine::generate with speculation on the tiny random llama: the same tokens as plain
// decoding at fixed depths and under the controller, with prompt lookup and with a
// scripted drafter that knows the plain continuation but gets every fourth token wrong
// (point masses, and draft distributions q), greedy and seeded sampling with penalties
// alike; num_predict honoured inside rounds; a prefix cache that continues exactly
// where a cold run would.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include "heron/engine/generator.h"
#include "heron/model/loader.h"
#include "heron/spec/depth_controller.h"
#include "heron/spec/prompt_lookup.h"

namespace mx = mlx::core;
using heron::cache::PrefixCache;
using heron::engine::GenerateOptions;
using heron::engine::GenerateStats;
using heron::engine::Next;
using heron::engine::TokenStep;
using heron::spec::Draft;

namespace {

// Proposes the known sequence (prompt and plain output) from where the target stands,
// wrong at every fourth position; with q, each draft gets 0.9 of its row's mass.
class ScriptedDrafter : public heron::spec::Drafter {
 public:
  ScriptedDrafter(std::vector<int> script, int vocab, bool with_q)
      : script_(std::move(script)), vocab_(vocab), with_q_(with_q) {}
  void reset(const heron::sample::SamplingOptions& /*sampling*/) override { seen_ = 0; }
  void committed(std::span<const int> tokens) override { seen_ += tokens.size(); }
  Draft propose(int max) override {
    Draft draft;
    for (size_t at = seen_; at < script_.size() && draft.tokens.size() < size_t(max); ++at) {
      draft.tokens.push_back(at % 4 == 3 ? (script_[at] + 1) % vocab_ : script_[at]);
    }
    if (with_q_ && !draft.empty()) {
      const int n = static_cast<int>(draft.tokens.size());
      auto q = mx::full({n, vocab_}, 0.1f / static_cast<float>(vocab_));
      auto ids = mx::array(draft.tokens.data(), {n, 1}, mx::int32);
      draft.probs = mx::put_along_axis(
          q, ids, mx::full({n, 1}, 0.9f + 0.1f / static_cast<float>(vocab_)), -1);
    }
    return draft;
  }

 private:
  std::vector<int> script_;
  int vocab_;
  bool with_q_;
  size_t seen_ = 0;
};

class SpeculativeDecode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new heron::model::LoadedModel(
        heron::model::load_model(HERON_FIXTURES "/models/tiny-llama"));
  }
  static void TearDownTestSuite() { delete loaded_; }

  static std::unique_ptr<PrefixCache> fresh() {
    return std::make_unique<PrefixCache>(loaded_->model->make_caches(),
                                         heron::cache::PrefixCacheOptions{});
  }
  static int vocab() { return loaded_->model->config().vocab_size; }

  // A prompt that repeats itself, so prompt lookup has something to propose.
  static std::vector<int> prompt() {
    std::vector<int> p;
    for (int r = 0; r < 3; ++r) {
      for (int i = 0; i < 12; ++i) p.push_back(5 + (i * 37) % 300);
    }
    return p;
  }

  static GenerateOptions options(int max_tokens, float temperature) {
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.ignore_eos = true;
    o.sampling.temperature = temperature;
    o.sampling.seed = 11;
    o.logprobs = {.enabled = true, .top = 2};
    return o;
  }

  static std::vector<TokenStep> run(PrefixCache& cache, const std::vector<int>& p,
                                    const GenerateOptions& o, heron::spec::Drafter& drafter,
                                    std::optional<int> depth, GenerateStats* stats = nullptr) {
    heron::spec::DepthController controller(
        heron::spec::DepthController::Options{.fixed_depth = depth});
    heron::engine::Speculation speculation{drafter, controller};
    std::vector<TokenStep> out;
    auto s = heron::engine::generate(
        *loaded_->model, cache, p, o,
        [&](const TokenStep& t) {
          out.push_back(t);
          return Next::Continue;
        },
        &speculation);
    if (stats) *stats = s;
    return out;
  }

  static std::vector<TokenStep> run_lookup(PrefixCache& cache, const std::vector<int>& p,
                                           const GenerateOptions& o, std::optional<int> depth,
                                           GenerateStats* stats = nullptr) {
    heron::spec::PromptLookup lookup;
    return run(cache, p, o, lookup, depth, stats);
  }

  static std::vector<TokenStep> run_plain(const std::vector<int>& p, GenerateOptions o) {
    o.speculate = false;
    return run_lookup(*fresh(), p, o, std::nullopt);
  }

  static std::vector<int> ids(const std::vector<TokenStep>& steps) {
    std::vector<int> out;
    for (const auto& s : steps) out.push_back(s.id);
    return out;
  }

  // Speculating at each depth gives plain decoding's tokens and logprobs.
  static void expect_same_as_plain(const GenerateOptions& o, const char* drafter, bool with_q) {
    const auto plain = run_plain(prompt(), o);
    ASSERT_EQ(static_cast<int>(plain.size()), o.max_tokens);
    auto script = prompt();
    for (const auto& s : plain) script.push_back(s.id);
    int accepted = 0, rejected = 0;
    for (std::optional<int> depth : {std::optional<int>(1), std::optional<int>(4),
                                     std::optional<int>(9), std::optional<int>()}) {
      GenerateStats stats;
      ScriptedDrafter scripted(script, vocab(), with_q);
      heron::spec::PromptLookup lookup;
      heron::spec::Drafter& d = std::string(drafter) == "scripted"
                                    ? static_cast<heron::spec::Drafter&>(scripted)
                                    : lookup;
      const auto spec = run(*fresh(), prompt(), o, d, depth, &stats);
      const std::string at =
          std::string(drafter) + (depth ? " depth " + std::to_string(*depth) : " controller");
      ASSERT_EQ(ids(spec), ids(plain)) << at;
      for (size_t i = 0; i < plain.size(); ++i) {
        EXPECT_NEAR(*spec[i].logprob, *plain[i].logprob, 1e-4) << at << " token " << i;
        ASSERT_EQ(spec[i].top.size(), 2u);
        EXPECT_EQ(spec[i].top[0].first, plain[i].top[0].first) << at << " token " << i;
      }
      if (depth) {
        EXPECT_GT(stats.speculation.rounds, 0) << at;
      }
      accepted += stats.speculation.accepted;
      rejected += stats.speculation.drafted - stats.speculation.accepted;
    }
    // Both paths of a round ran.
    EXPECT_GT(accepted, 0);
    EXPECT_GT(rejected, 0);
  }

  static heron::model::LoadedModel* loaded_;
};

heron::model::LoadedModel* SpeculativeDecode::loaded_ = nullptr;

}  // namespace

TEST_F(SpeculativeDecode, PromptLookupGivesThePlainDecodersGreedyTokens) {
  expect_same_as_plain(options(48, 0.0f), "lookup", false);
}

TEST_F(SpeculativeDecode, PointMassDraftsGiveThePlainDecodersSeededSamplingWithPenalties) {
  auto o = options(48, 0.9f);
  o.sampling.top_k = 20;
  o.sampling.repeat_penalty = 1.1f;
  o.sampling.frequency_penalty = 0.1f;
  expect_same_as_plain(o, "scripted", false);
}

TEST_F(SpeculativeDecode, DraftDistributionsGiveThePlainDecodersGreedyTokens) {
  auto o = options(48, 0.0f);
  o.sampling.repeat_penalty = 1.1f;
  expect_same_as_plain(o, "scripted", true);
}

TEST_F(SpeculativeDecode, NumPredictIsHonouredInsideRounds) {
  for (int max_tokens : {1, 2, 3, 7, 13}) {
    GenerateStats stats;
    EXPECT_EQ(run_lookup(*fresh(), prompt(), options(max_tokens, 0.0f), 8, &stats).size(),
              static_cast<size_t>(max_tokens));
    EXPECT_EQ(stats.decode_tokens, max_tokens);
    EXPECT_EQ(stats.done_reason, "length");
  }
}

TEST_F(SpeculativeDecode, TheCacheAfterRoundsContinuesLikeAColdRun) {
  auto cache = fresh();
  const auto first = ids(run_lookup(*cache, prompt(), options(30, 0.0f), 6));
  // The next turn: the conversation so far and a few new tokens.
  auto next = prompt();
  next.insert(next.end(), first.begin(), first.end());
  next.insert(next.end(), {7, 8, 9});
  GenerateStats warm_stats;
  const auto warm = ids(run_lookup(*cache, next, options(20, 0.0f), 6, &warm_stats));
  EXPECT_GE(warm_stats.cached_tokens, static_cast<int>(prompt().size()));
  EXPECT_EQ(warm, ids(run_plain(next, options(20, 0.0f))));
}
