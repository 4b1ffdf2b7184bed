// engine::generate with speculation on the tiny random llama: the same tokens as plain
// decoding at fixed depths and under the controller, with prompt lookup, draft models
// (itself, and the unrelated tiny qwen3 of the same vocabulary) and a scripted drafter
// that knows the plain continuation but gets every fourth token wrong (point masses, and
// draft distributions q), greedy and seeded sampling with penalties alike; with a
// different draft model's q, the first three sampled tokens follow plain sampling's exact
// distribution; num_predict honoured inside rounds; a prefix cache that continues
// exactly where a cold run would.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <map>

#include "heron/core/error.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"
#include "heron/sample/filter.h"
#include "heron/spec/depth_controller.h"
#include "heron/spec/draft_model.h"
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
    other_ = new heron::model::LoadedModel(
        heron::model::load_model(HERON_FIXTURES "/models/tiny-qwen3"));
  }
  static void TearDownTestSuite() {
    delete loaded_;
    delete other_;
  }

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
    return run(cache, p, o, drafter, controller, stats);
  }

  static std::vector<TokenStep> run(PrefixCache& cache, const std::vector<int>& p,
                                    const GenerateOptions& o, heron::spec::Drafter& drafter,
                                    heron::spec::DepthController& controller,
                                    GenerateStats* stats = nullptr) {
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
      heron::spec::DraftModel itself(*loaded_->model), other(*other_->model);
      const std::string name = drafter;
      heron::spec::Drafter& d = name == "scripted" ? static_cast<heron::spec::Drafter&>(scripted)
                                : name == "itself" ? static_cast<heron::spec::Drafter&>(itself)
                                : name == "other"  ? static_cast<heron::spec::Drafter&>(other)
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
    // The paths of a round this drafter can take ran.
    if (std::string(drafter) != "other") {
      EXPECT_GT(accepted, 0);
    }
    if (std::string(drafter) == "itself") {
      EXPECT_EQ(rejected, 0);
    } else {
      EXPECT_GT(rejected, 0);
    }
  }

  static heron::model::LoadedModel* loaded_;
  static heron::model::LoadedModel* other_;
};

heron::model::LoadedModel* SpeculativeDecode::loaded_ = nullptr;
heron::model::LoadedModel* SpeculativeDecode::other_ = nullptr;

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

TEST_F(SpeculativeDecode, ProbesFromPlainDecodingReachTheTarget) {
  // A controller that expects nothing to be accepted decodes plainly but for its probes,
  // one deep; each drains the pipeline and must still be verified, or a controller that
  // once stopped speculating would never learn that it pays again.
  heron::spec::DepthController controller(
      heron::spec::DepthController::Options{.probe_every = 4, .prior_accept = 0.0});
  heron::spec::DraftModel itself(*loaded_->model);
  GenerateStats stats;
  const auto o = options(40, 0.0f);
  const auto out = run(*fresh(), prompt(), o, itself, controller, &stats);
  EXPECT_EQ(ids(out), ids(run_plain(prompt(), o)));
  EXPECT_GE(stats.speculation.rounds, 3);
  EXPECT_EQ(stats.speculation.accepted, stats.speculation.drafted);
}

TEST_F(SpeculativeDecode, DraftModelsGiveThePlainDecodersGreedyTokens) {
  expect_same_as_plain(options(40, 0.0f), "itself", false);
  expect_same_as_plain(options(40, 0.0f), "other", false);
}

TEST_F(SpeculativeDecode, ADraftModelThatIsTheTargetIsAlwaysAcceptedWhenSampling) {
  // q == p at every position (the same model under the same filters), so min(1, p/q) = 1.
  heron::spec::DraftModel itself(*loaded_->model);
  auto o = options(40, 0.8f);
  o.sampling.top_p = 0.9f;
  GenerateStats stats;
  EXPECT_EQ(run(*fresh(), prompt(), o, itself, 5, &stats).size(), 40u);
  EXPECT_GT(stats.speculation.drafted, 20);
  EXPECT_EQ(stats.speculation.accepted, stats.speculation.drafted);
}

// The exact distribution of plain sampling's first three tokens, over the tokens `keep`
// leaves at each step, from the model's own logits.
std::map<std::vector<int>, double> first_three(const heron::model::Model& model,
                                               const std::vector<int>& prompt,
                                               const heron::sample::SamplingOptions& options) {
  std::map<std::vector<int>, double> out;
  std::function<void(std::vector<int>, double)> expand = [&](std::vector<int> seq, double mass) {
    if (seq.size() == prompt.size() + 3) {
      out[{seq.end() - 3, seq.end()}] = mass;
      return;
    }
    auto caches = model.make_caches();
    auto logits =
        model.forward(heron::model::Batch::single(seq, 0, heron::model::LogitsFor::Last), caches)
            .logits;
    const int vocab = logits.shape(-1);
    auto p = heron::sample::filter_rows(mx::astype(mx::reshape(logits, {1, vocab}), mx::float32),
                                        options, std::nullopt)
                 .probs();
    mx::eval(p);
    for (int t = 0; t < vocab; ++t) {
      if (const float pt = p.data<float>()[t]; pt > 0) {
        auto next = seq;
        next.push_back(t);
        expand(next, mass * pt);
      }
    }
  };
  expand(prompt, 1.0);
  return out;
}

// The target itself drafting at twice the temperature: the same support, other
// probabilities, so every draft is a real test of min(1, p/q) and the residual.
class HotterDraft : public heron::spec::DraftModel {
 public:
  using DraftModel::DraftModel;
  void reset(const heron::sample::SamplingOptions& sampling) override {
    auto hotter = sampling;
    hotter.temperature *= 4;
    DraftModel::reset(hotter);
  }
};

TEST_F(SpeculativeDecode, ADifferentDraftDistributionSamplesThePlainDistribution) {
  // 1,000 seeded runs of three tokens drafting two at a time; the triples' Pearson
  // chi-square against the exact distribution, at a false-failure rate of 1e-6 (27
  // cells: the critical value for 26 degrees of freedom is 75.55).
  auto o = options(3, 0.25f);
  o.sampling.top_k = 3;
  o.logprobs = {};
  const auto exact = first_three(*loaded_->model, prompt(), o.sampling);
  ASSERT_EQ(exact.size(), 27u);
  constexpr int kRuns = 1000;
  std::map<std::vector<int>, double> seen;
  HotterDraft hotter(*loaded_->model);
  auto cache = fresh();
  int accepted = 0, rejected = 0;
  for (int r = 0; r < kRuns; ++r) {
    o.sampling.seed = static_cast<uint64_t>(r);
    GenerateStats stats;
    seen[ids(run(*cache, prompt(), o, hotter, 2, &stats))] += 1;
    accepted += stats.speculation.accepted;
    rejected += stats.speculation.drafted - stats.speculation.accepted;
  }
  // Both paths ran often.
  EXPECT_GT(accepted, 200);
  EXPECT_GT(rejected, 100);
  double chi = 0;
  for (const auto& [triple, p] : exact) {
    const double expected = kRuns * p;
    ASSERT_GE(expected, 5);
    chi += (seen[triple] - expected) * (seen[triple] - expected) / expected;
  }
  EXPECT_EQ(seen.size(), exact.size()) << "a triple outside the target's support";
  EXPECT_LT(chi, 75.55);
}

TEST(DraftVocabulary, ADifferentVocabularyIsRefusedNamingBothSizes) {
  heron::model::ModelConfig target, draft;
  target.vocab_size = 49152;
  draft.vocab_size = 32000;
  try {
    heron::spec::check_draft_vocabulary(target, draft, "small");
    FAIL() << "no error";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("small has a vocabulary of 32000 tokens"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("49152"), std::string::npos) << e.what();
  }
  draft.vocab_size = 49152;
  EXPECT_NO_THROW(heron::spec::check_draft_vocabulary(target, draft, "small"));
}
