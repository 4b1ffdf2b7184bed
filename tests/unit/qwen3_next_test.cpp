// Qwen3-Next and Qwen3.5 (tests/fixtures/models/tiny-qwen3-next and tiny-qwen3-5, made
// by tools/make_tiny_qwen3_next.py) beyond the logits ModelLogits compares: mlx-lm's own
// layout gives the same logits; the recurrent caches roll back, restore from saved
// segments (also through the tensors the disk tier stores) and keep the states at restore
// points a prefill crosses, with mlx-lm's logits after each; what they cannot restore they
// say so; broken configs and weights are clear errors. Qwen3.5's multi-token-prediction
// head gives the logits of mlx-lm's layers composed as vLLM composes the head, and drafts
// with them.
#include <gtest/gtest.h>

#include <string>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/cache/recurrent_cache.h"
#include "heron/core/error.h"
#include "heron/model/layer_caches.h"
#include "heron/model/loader.h"
#include "heron/spec/head_drafter.h"
#include "mlx_lm_reference.h"
#include "temp_model_dir.h"

namespace heron::model {
namespace {

namespace mx = mlx::core;

const std::string kNext = std::string(HERON_FIXTURES) + "/models/tiny-qwen3-next";
const std::string kQwen35 = std::string(HERON_FIXTURES) + "/models/tiny-qwen3-5";
const LoadOptions kLoad{.dtype = mx::float32, .load_tokenizer = false};

// Runs tokens [from, to) of the reference sequence through `caches` and returns the
// logits' relative error to mlx-lm's.
struct Runner {
  const Model& model;
  test::MlxLmReference ref;
  float operator()(cache::Caches& caches, int from, int to) const {
    std::vector<int> part(ref.tokens.begin() + from, ref.tokens.begin() + to);
    auto logits = mx::squeeze(model.forward(Batch::single(part, from), caches).logits, 0);
    return test::relative_error_to(logits,
                                   mx::slice(ref.logits, {from, 0}, {to, ref.logits.shape(1)}));
  }
};

TEST(Qwen3Next, MlxLmsLayoutGivesMlxLmsLogits) {
  // mlx-lm's sanitized files: RMSNorm weights hold 1 + w, the convolution is
  // [channels, kernel, 1], the experts are stacked.
  test::TempModelDir dir("heron-qwen3-next-mlx-layout", kNext);
  auto weights = mx::load_safetensors(kNext + "/model.safetensors").first;
  std::unordered_map<std::string, mx::array> sanitized;
  std::map<std::string, std::vector<mx::array>> experts;
  for (const auto& [name, a] : weights) {
    const auto at = name.find(".mlp.experts.");
    if (at != std::string::npos) {
      const auto rest = name.substr(at + 13);
      const auto dot = rest.find('.');
      const int e = std::stoi(rest.substr(0, dot));
      auto& list = experts[name.substr(0, at) + ".mlp.switch_mlp." + rest.substr(dot + 1)];
      if (list.size() <= static_cast<size_t>(e)) list.resize(e + 1, mx::array(0.0f));
      list[e] = a;
      continue;
    }
    const bool offset_norm = name.ends_with("layernorm.weight") || name == "model.norm.weight" ||
                             name.ends_with("q_norm.weight") || name.ends_with("k_norm.weight");
    if (offset_norm) {
      sanitized.insert_or_assign(name, mx::add(a, mx::array(1.0f)));
    } else if (name.ends_with("conv1d.weight")) {
      sanitized.insert_or_assign(name, mx::swapaxes(a, 1, 2));
    } else {
      sanitized.insert_or_assign(name, a);
    }
  }
  for (const auto& [name, list] : experts) sanitized.insert_or_assign(name, mx::stack(list));
  dir.write_weights(sanitized);
  const auto ref = test::mlx_lm_reference(kNext);
  auto loaded = load_model(dir.path(), kLoad);
  auto caches = loaded.model->make_caches();
  auto logits = loaded.model->forward(Batch::single(ref.tokens, 0), caches).logits;
  EXPECT_LE(test::relative_error_to(mx::squeeze(logits, 0), ref.logits), 1e-4f);
}

// Chunks, single steps, rollbacks after a verify-sized write and after single steps (a
// draft model's), then fresh caches restored from saved segments, one of them rebuilt from
// its stored tensors as the disk tier does: mlx-lm's logits all along, for both models.
class RecurrentCaches : public ::testing::TestWithParam<std::string> {};

TEST_P(RecurrentCaches, RollBackAndRestore) {
  auto loaded = load_model(GetParam(), kLoad);
  const auto& model = *loaded.model;
  const Runner forward{model, test::mlx_lm_reference(GetParam())};
  auto caches = model.make_caches();
  EXPECT_LE(forward(caches, 0, 25), 1e-4f);
  for (int at = 25; at < 40; at += 5) ASSERT_LE(forward(caches, at, at + 5), 1e-4f) << at;
  // A verify of 5 positions of which the last 3 are rejected.
  for (auto& c : caches) c->rewind(3);
  EXPECT_LE(forward(caches, 37, 42), 1e-4f);
  for (int at = 42; at < 48; ++at) ASSERT_LE(forward(caches, at, at + 1), 1e-4f) << at;
  // Four single steps taken back at once.
  for (auto& c : caches) c->rewind(4);
  EXPECT_LE(forward(caches, 44, 48), 1e-4f);

  auto restored = model.make_caches();
  for (size_t i = 0; i < caches.size(); ++i) {
    auto saved = caches[i]->save(0, 48);
    if (i == 0) saved = caches[i]->segment_from(0, 48, saved->tensors());
    restored[i]->load(*saved);
  }
  for (int at = 48; at < 64; ++at) ASSERT_LE(forward(restored, at, at + 1), 1e-4f) << at;
  // A recurrent layer's segment is the state at its end: one "position" per part.
  const auto tensors = restored[0]->save(0, 64)->tensors();
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].shape(2), 1);
  EXPECT_EQ(tensors[1].shape(2), 1);
  EXPECT_EQ(tensors[1].shape(3), 4 * 24 * 16);  // value heads x value dims x key dims
}

INSTANTIATE_TEST_SUITE_P(TinyModels, RecurrentCaches, ::testing::Values(kNext, kQwen35),
                         [](const auto& param) {
                           return param.param == kNext ? std::string("Qwen3Next")
                                                       : std::string("Qwen3_5");
                         });

// A prefill crossing restore points keeps the states there, from inside one write (the
// scan stops at them), so a rewind far past the rollback slack resumes from them; other
// offsets the caches say they cannot restore, and their segments restore nothing.
TEST(Qwen3Next, RestorePointsAreKeptAsThePrefillCrossesThem) {
  auto loaded = load_model(kNext, kLoad);
  const auto& model = *loaded.model;
  const Runner forward{model, test::mlx_lm_reference(kNext)};
  auto caches = make_layer_caches(model.config(), 2);
  for (auto& c : caches) c->capture_at({9, 30});
  EXPECT_LE(forward(caches, 0, 45), 1e-4f);
  for (auto& c : caches) {
    EXPECT_TRUE(cache::holds_state_at(*c, 30));
    EXPECT_TRUE(cache::holds_state_at(*c, 9));
    EXPECT_TRUE(cache::holds_state_at(*c, 43));  // within the slack of 2
  }
  auto& recurrent = *caches[0];
  EXPECT_FALSE(cache::holds_state_at(recurrent, 31));
  EXPECT_FALSE(cache::holds_state_at(recurrent, 42));
  auto lost = recurrent.save(0, 31);
  EXPECT_EQ(lost->data_begin(), 31);  // nothing there to restore from
  // A segment [0, 45) holds the state at 45 only: its first part restores nothing.
  auto [first, second] = recurrent.save(0, 45)->split(30);
  EXPECT_EQ(first->data_begin(), 30);
  EXPECT_EQ(second->data_begin(), 44);

  for (auto& c : caches) c->rewind(15);
  EXPECT_LE(forward(caches, 30, 50), 1e-4f);
  // The point at 9 outlived the rewind to 30; back there, prefill runs again.
  for (auto& c : caches) c->rewind(41);
  EXPECT_LE(forward(caches, 9, 64), 1e-4f);
}

TEST(Qwen3Next, BrokenConfigsAndWeightsAreClearErrors) {
  const auto weights = mx::load_safetensors(kNext + "/model.safetensors").first;
  auto expect_error = [&](const std::function<void(nlohmann::json&)>& edit,
                          const std::string& says) {
    test::TempModelDir dir("heron-qwen3-next-bad", kNext);
    dir.write_weights(weights);
    dir.edit_config(edit);
    const auto error = dir.load_error();
    EXPECT_NE(error.find(says), std::string::npos) << error;
  };
  expect_error([](auto& c) { c["linear_num_value_heads"] = 3; },
               "'linear_num_value_heads' must be a multiple of 'linear_num_key_heads'");
  expect_error([](auto& c) { c["layer_types"] = {"linear_attention"}; },
               "'layer_types' must name the kind of each of the 4 layers");
  expect_error(
      [](auto& c) {
        c["layer_types"] = {"linear_attention", "full_attention", "mamba", "full_attention"};
      },
      "'layer_types' holds \"mamba\"");
  expect_error([](auto& c) { c["partial_rotary_factor"] = 0.01; },
               "'partial_rotary_factor' must give an even number of rotated dimensions");
  expect_error([](auto& c) { c["linear_conv_kernel_dim"] = 1; },
               "'linear_conv_kernel_dim' must be at least 2");
  expect_error([](auto& c) { c["linear_key_head_dim"] = 8; }, "in_proj_qkvz.weight' must have");
  expect_error(
      [](auto& c) {
        c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 2.0}};
      },
      "rope_scaling 'yarn' is not supported with partial RoPE");

  test::TempModelDir dir("heron-qwen3-next-bad-weights", kNext);
  auto broken = weights;
  broken.insert_or_assign("model.layers.0.linear_attn.A_log", mx::zeros({3}));
  dir.write_weights(broken);
  EXPECT_NE(dir.load_error().find("linear_attn.A_log' must hold 4 values"), std::string::npos);
  broken = weights;
  broken.insert_or_assign("model.layers.2.linear_attn.conv1d.weight", mx::zeros({160, 1, 3}));
  dir.write_weights(broken);
  EXPECT_NE(dir.load_error().find("conv1d.weight' must be [160, 4]"), std::string::npos);
}

// The cache refuses what would corrupt it: keys and values, a write whose states do not
// match, stored tensors of another shape.
TEST(RecurrentCache, RefusesWhatIsNotItsState) {
  cache::RecurrentCache c({3, 8}, {2, 4, 4}, 2);
  EXPECT_THROW(c.update(mx::zeros({1, 1, 1, 4}), mx::zeros({1, 1, 1, 4})), Error);
  EXPECT_FALSE(c.state().has_value());
  EXPECT_EQ(c.keeps(5), (std::vector<int>{3, 4, 5}));
  EXPECT_THROW(c.advance(5, {}), Error);
  const cache::RecurrentCache::State s{mx::zeros({1, 3, 8}), mx::zeros({1, 2, 4, 4})};
  c.advance(1, {s});
  EXPECT_THROW(c.segment_from(0, 1, {mx::zeros({1, 1, 1, 24})}), Error);
  EXPECT_THROW(c.segment_from(0, 1, {mx::zeros({1, 1, 1, 24}), mx::zeros({1, 1, 1, 31})}), Error);
  EXPECT_NO_THROW(c.segment_from(0, 1, {mx::zeros({1, 1, 1, 24}), mx::zeros({1, 1, 1, 32})}));
  c.advance(4, {s, s, s});
  c.rewind(2);  // kept: the states at 3, 4 and 5
  EXPECT_TRUE(c.state().has_value());
  c.rewind(1);  // 2 is past the slack
  EXPECT_THROW(c.state(), Error);
}

// A model with its multi-token-prediction head and reference: the tokens, the head's
// reference logits for their pairs, and the model's final hidden states for them.
class PredictionHeads : public ::testing::TestWithParam<std::string> {
 protected:
  LoadedModel loaded = load_model(GetParam(), kLoad);
  const Model& model = *loaded.model;
  test::MlxLmReference ref = test::mlx_lm_reference(GetParam());
  mx::array expected =
      mx::load_safetensors(GetParam() + "/reference_logits.safetensors").first.at("mtp_logits");
  mx::array hiddens = hiddens_of(ref.tokens);
  mx::array hiddens_of(const std::vector<int>& tokens) const {
    auto caches = loaded.model->make_caches();
    return *loaded.model->forward(Batch::single(tokens, 0), caches, true).hiddens;
  }
};

// The head over the pairs (final hidden state at t, token t + 1) of the reference
// sequence, all at once and then a chunk and single steps through its KV cache.
TEST_P(PredictionHeads, GiveTheReferenceLogits) {
  const int pairs = static_cast<int>(ref.tokens.size()) - 1;
  ASSERT_EQ(hiddens.shape(1), pairs + 1);
  const auto* head = model.prediction_head();
  ASSERT_NE(head, nullptr);
  auto run = [&](cache::Caches& c, int from, int to) {
    auto tokens = mx::array(ref.tokens.data() + from + 1, {1, to - from}, mx::int32);
    auto h = mx::slice(hiddens, {0, from, 0}, {1, to, hiddens.shape(2)});
    auto logits = mx::squeeze(head->forward(tokens, h, from, c).logits, 0);
    return test::relative_error_to(logits, mx::slice(expected, {from, 0}, {to, expected.shape(1)}));
  };
  auto all = head->make_caches();
  EXPECT_LE(run(all, 0, pairs), 1e-4f);
  auto steps = head->make_caches();
  EXPECT_LE(run(steps, 0, 30), 1e-4f);
  for (int t = 30; t < pairs; ++t) ASSERT_LE(run(steps, t, t + 1), 1e-4f) << t;
}

// The drafter pairs what it heard as the engine hands it over: a proposal's first draw
// comes from the head's distribution for the last pair (q equals the softmax of the
// reference logits at temperature 1), after single commits, after a round of drafts, and
// in a new request that shares a prefix; greedy requests get the head's best as a point
// mass; without the last pair's hidden state it proposes nothing.
TEST_P(PredictionHeads, DraftFromTheirDistributionForTheLastPair) {
  auto rows = [&](int from, int to) {
    return mx::slice(hiddens, {0, from, 0}, {1, to, hiddens.shape(2)});
  };
  auto logits_of = [&](int pair) {
    return mx::slice(expected, {pair, 0}, {pair + 1, expected.shape(1)});
  };
  auto first_q_error = [&](const spec::Draft& draft, int pair) {
    EXPECT_TRUE(draft.probs.has_value());
    if (!draft.probs) return 1.0f;
    const auto q = mx::slice(*draft.probs, {0, 0}, {1, draft.probs->shape(1)});
    return mx::max(mx::abs(mx::subtract(q, mx::softmax(logits_of(pair), -1)))).item<float>();
  };
  const std::span<const int> tokens(ref.tokens);
  spec::HeadDrafter drafter(*model.prediction_head(), 4096);
  sample::SamplingOptions sampled;
  sampled.temperature = 1.0f;
  sampled.seed = 7;
  drafter.reset(sampled);
  // A prompt of 20 tokens, prefilled but its last: hidden states of positions 0 .. 18.
  drafter.committed(tokens.first(20));
  drafter.target_hiddens(0, rows(0, 19));
  auto draft = drafter.propose(3);
  ASSERT_EQ(draft.tokens.size(), 3u);
  EXPECT_LE(first_q_error(draft, 18), 1e-5f);
  // Plain steps: each position's hidden state, then its token.
  for (int p = 19; p < 25; ++p) {
    drafter.target_hiddens(p, rows(p, p + 1));
    drafter.committed(tokens.subspan(static_cast<size_t>(p) + 1, 1));
  }
  EXPECT_LE(first_q_error(drafter.propose(2), 24), 1e-5f);
  // A round that accepted two drafts and its bonus token.
  drafter.target_hiddens(25, rows(25, 28));
  drafter.committed(tokens.subspan(26, 3));
  EXPECT_LE(first_q_error(drafter.propose(1), 27), 1e-5f);

  // Plain steps all the way: the hidden states arrive one position at a time, and their
  // runs are joined now and then.
  spec::HeadDrafter stepped(*model.prediction_head(), 4096);
  stepped.reset(sampled);
  stepped.committed(tokens.first(2));
  stepped.target_hiddens(0, rows(0, 1));
  for (int p = 1; p < 62; ++p) {
    stepped.target_hiddens(p, rows(p, p + 1));
    stepped.committed(tokens.subspan(static_cast<size_t>(p) + 1, 1));
    if (p % 10 == 0) {
      EXPECT_LE(first_q_error(stepped.propose(2), p), 1e-5f) << p;
    }
  }

  // A new greedy request sharing 22 tokens, whose prefill the prefix cache started at 22.
  sample::SamplingOptions greedy;
  greedy.temperature = 0;
  drafter.reset(greedy);
  drafter.committed(tokens.first(40));
  drafter.target_hiddens(22, rows(22, 39));
  draft = drafter.propose(1);
  EXPECT_FALSE(draft.probs.has_value());
  EXPECT_EQ(draft.tokens.at(0), mx::argmax(logits_of(38)).item<int>());
  // One whose hidden states it never heard up to the last pair: nothing to propose.
  drafter.reset(greedy);
  drafter.committed(tokens.first(50));
  EXPECT_TRUE(drafter.propose(2).empty());

  // A request that left the last one at position 10 but whose prefill started at 22 (the
  // prefix cache restored another conversation): what it heard from 10 on was another
  // sequence's, so it starts after the gap, as a drafter that never heard anything before
  // 22 does.
  auto other = ref.tokens;
  other[10] = other[10] == 5 ? 6 : 5;
  const auto other_hiddens = hiddens_of(other);
  drafter.reset(sampled);
  drafter.committed(std::span<const int>(other).first(40));
  drafter.target_hiddens(0, mx::slice(other_hiddens, {0, 0, 0}, {1, 39, hiddens.shape(2)}));
  drafter.propose(2);
  drafter.reset(sampled);
  drafter.committed(tokens.first(40));
  drafter.target_hiddens(22, rows(22, 39));
  spec::HeadDrafter fresh(*model.prediction_head(), 4096);
  fresh.reset(sampled);
  fresh.committed(tokens.first(40));
  fresh.target_hiddens(22, rows(22, 39));
  const auto ours = drafter.propose(1), theirs = fresh.propose(1);
  ASSERT_TRUE(ours.probs && theirs.probs);
  EXPECT_LE(mx::max(mx::abs(mx::subtract(*ours.probs, *theirs.probs))).item<float>(), 1e-6f);
}

// Qwen3.5's head with a dense feed-forward, Qwen3-Next's with experts.
INSTANTIATE_TEST_SUITE_P(TinyModels, PredictionHeads, ::testing::Values(kQwen35, kNext),
                         [](const auto& param) {
                           return param.param == kNext ? std::string("Qwen3Next")
                                                       : std::string("Qwen3_5");
                         });

TEST(Qwen3_5, FilesWithoutAHeadHaveNone) {
  EXPECT_EQ(load_model(std::string(HERON_FIXTURES) + "/models/tiny-qwen3-5-moe", kLoad)
                .model->prediction_head(),
            nullptr);
}

}  // namespace
}  // namespace heron::model
