// A trained draft head (model/layers/draft_head.h) bound to the tiny random llama: its
// logits cover the model's vocabulary with -inf outside its draft vocabulary, its drafts
// come from that vocabulary only, speculation with it through HeadDrafter (and behind
// prompt lookup) gives plain decoding's greedy tokens, and a head that does
// not fit its model is refused at load with an error naming what is wrong.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <set>

#include "heron/core/error.h"
#include "heron/engine/generator.h"
#include "heron/model/draft_head_loader.h"
#include "heron/model/loader.h"
#include "heron/spec/depth_controller.h"
#include "heron/spec/head_drafter.h"
#include "heron/spec/lookup_first.h"
#include "temp_model_dir.h"

namespace mx = mlx::core;
using heron::engine::TokenStep;

namespace {

constexpr int kVocab = 512;  // tiny-llama's

// Every third id from 1: the draft vocabulary.
std::vector<int> draft_ids() {
  std::vector<int> ids;
  for (int id = 1; id < kVocab; id += 3) ids.push_back(id);
  return ids;
}

class HeadDir {
 public:
  HeadDir()
      : path_(std::filesystem::temp_directory_path() / ("draft-head-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    config_ = {{"architectures", {"HeronDraftHead"}},
               {"model_type", "heron_draft_head"},
               {"hidden_size", 64},
               {"intermediate_size", 96},
               {"num_attention_heads", 4},
               {"num_key_value_heads", 2},
               {"head_dim", 16},
               {"rms_norm_eps", 1e-5},
               {"rope_theta", 10000.0},
               {"vocab_size", kVocab}};
    auto key = mx::random::key(5);
    auto normal = [&](const mx::Shape& shape) {
      auto keys = mx::random::split(key);
      key = keys.first;
      return mx::multiply(mx::random::normal(shape, mx::float32, keys.second), mx::array(0.2f));
    };
    const std::string l = "layers.0.";
    weights_ = {{"fc.weight", normal({64, 128})},
                {l + "input_layernorm.weight", mx::ones({64})},
                {l + "post_attention_layernorm.weight", mx::ones({64})},
                {l + "self_attn.q_proj.weight", normal({64, 64})},
                {l + "self_attn.k_proj.weight", normal({32, 64})},
                {l + "self_attn.v_proj.weight", normal({32, 64})},
                {l + "self_attn.o_proj.weight", normal({64, 64})},
                {l + "mlp.gate_proj.weight", normal({96, 64})},
                {l + "mlp.up_proj.weight", normal({96, 64})},
                {l + "mlp.down_proj.weight", normal({64, 96})}};
    const auto ids = draft_ids();
    weights_.insert_or_assign("d2t",
                              mx::array(ids.data(), {static_cast<int>(ids.size())}, mx::int32));
  }
  ~HeadDir() { std::filesystem::remove_all(path_); }
  HeadDir(const HeadDir&) = delete;
  HeadDir& operator=(const HeadDir&) = delete;

  nlohmann::json& config() { return config_; }
  std::unordered_map<std::string, mx::array>& weights() { return weights_; }
  std::unique_ptr<heron::model::PredictionHead> load(const heron::model::Model& model) const {
    std::ofstream(path_ / "config.json") << config_.dump(2);
    mx::save_safetensors((path_ / "model.safetensors").string(), weights_);
    return heron::model::load_draft_head(*heron::model::files_at(path_), model, {});
  }

 private:
  std::filesystem::path path_;
  nlohmann::json config_;
  std::unordered_map<std::string, mx::array> weights_;
};

class DraftHead : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new heron::model::LoadedModel(
        heron::model::load_model(HERON_FIXTURES "/models/tiny-llama"));
  }
  static void TearDownTestSuite() { delete loaded_; }
  static const heron::model::Model& model() { return *loaded_->model; }

  static std::vector<int> prompt() {
    std::vector<int> p;
    p.reserve(20);
    for (int i = 0; i < 20; ++i) p.push_back(7 + (i * 53) % 400);
    return p;
  }

  static std::vector<int> generate(heron::spec::Drafter* drafter, float temperature,
                                   std::optional<int> depth, heron::engine::GenerateStats* stats) {
    heron::cache::PrefixCache cache(model().make_caches(), {});
    heron::engine::GenerateOptions o;
    o.max_tokens = 40;
    o.ignore_eos = true;
    o.sampling.temperature = temperature;
    o.sampling.seed = 17;
    o.speculate = drafter != nullptr;
    heron::spec::DepthController controller({.fixed_depth = depth});
    heron::spec::PromptLookup unused;
    heron::engine::Speculation speculation{drafter ? *drafter : unused, controller};
    std::vector<int> out;
    auto s = heron::engine::generate(
        model(), cache, prompt(), o,
        [&](const TokenStep& t) {
          out.push_back(t.id);
          return heron::engine::Next::Continue;
        },
        &speculation);
    if (stats) *stats = s;
    return out;
  }

  static heron::model::LoadedModel* loaded_;
};

heron::model::LoadedModel* DraftHead::loaded_ = nullptr;

TEST_F(DraftHead, LogitsCoverTheVocabularyAndDraftsComeFromItsOwn) {
  HeadDir dir;
  const auto head = dir.load(model());
  auto caches = head->make_caches();
  auto out = head->forward(mx::array({5, 9, 12}, {1, 3}), mx::ones({1, 3, 64}), 0, caches);
  ASSERT_EQ(out.logits.shape(), (mx::Shape{1, 3, kVocab}));
  const auto logits = mx::astype(out.logits, mx::float32);
  mx::eval(logits);
  const auto ids = draft_ids();
  const std::set<int> kept(ids.begin(), ids.end());
  for (int position = 0; position < 3; ++position) {
    for (int id = 0; id < kVocab; ++id) {
      const float v = logits.data<float>()[position * kVocab + id];
      if (kept.count(id)) {
        EXPECT_TRUE(std::isfinite(v)) << id;
      } else {
        EXPECT_EQ(v, -std::numeric_limits<float>::infinity()) << id;
      }
    }
  }

  heron::spec::HeadDrafter drafter(*head, 4096);
  drafter.reset({.temperature = 1.0f, .seed = 3});
  const auto p = prompt();
  drafter.committed(p);
  auto caches_model = model().make_caches();
  auto target = model().forward(heron::model::Batch::single(p, 0), caches_model, true);
  drafter.target_hiddens(0, *target.hiddens);
  const auto draft = drafter.propose(6);
  ASSERT_EQ(draft.tokens.size(), 6u);
  for (int t : draft.tokens) EXPECT_TRUE(kept.count(t)) << t;
}

TEST_F(DraftHead, SpeculationWithItGivesPlainDecodingsTokens) {
  HeadDir dir;
  const auto head = dir.load(model());
  // Greedy: sampled rounds follow plain sampling's distribution (speculative_decode_test),
  // not its very tokens.
  const auto plain = generate(nullptr, 0.0f, std::nullopt, nullptr);
  for (const int depth : {1, 3}) {
    heron::spec::HeadDrafter drafter(*head, 4096);
    heron::engine::GenerateStats stats;
    EXPECT_EQ(generate(&drafter, 0.0f, depth, &stats), plain) << "depth " << depth;
    EXPECT_GT(stats.speculation.rounds, 0);
  }
  heron::spec::HeadDrafter behind(*head, 4096);
  heron::spec::LookupFirst lookup_first(behind);
  EXPECT_EQ(generate(&lookup_first, 0.0f, 2, nullptr), plain);
}

TEST_F(DraftHead, HeadsThatDoNotFitAreRefusedByName) {
  struct Case {
    std::string what;
    std::function<void(HeadDir&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"id past the vocabulary",
       [](HeadDir& d) {
         d.weights().insert_or_assign("d2t", mx::array({1, 2, kVocab}));
       },
       "'d2t' must hold distinct ids"},
      {"ids out of order",
       [](HeadDir& d) {
         d.weights().insert_or_assign("d2t", mx::array({4, 2, 9}));
       },
       "ascending"},
      {"float ids",
       [](HeadDir& d) {
         d.weights().insert_or_assign("d2t", mx::array({1.0f, 2.0f}));
       },
       "integer tensor"},
      {"another model's width", [](HeadDir& d) { d.config()["hidden_size"] = 32; },
       "hidden size 32"},
      {"no rope_theta", [](HeadDir& d) { d.config().erase("rope_theta"); }, "'rope_theta'"},
      {"no fc", [](HeadDir& d) { d.weights().erase("fc.weight"); }, "fc.weight"},
      {"fc of the wrong width",
       [](HeadDir& d) {
         d.weights().insert_or_assign("fc.weight", mx::zeros({64, 100}));
       },
       "do not fit together"},
  };
  for (const auto& c : cases) {
    HeadDir dir;
    c.edit(dir);
    try {
      dir.load(model());
      ADD_FAILURE() << c.what << ": loaded";
    } catch (const heron::Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.what << ": " << e.what();
    }
  }
}

}  // namespace
