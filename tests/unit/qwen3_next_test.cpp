// Qwen3-Next and Qwen3.5 (tests/fixtures/models/tiny-qwen3-next and tiny-qwen3-5, made
// by tools/make_tiny_qwen3_next.py) beyond the logits ModelLogits compares: mlx-lm's own
// layout gives the same logits; the recurrent caches roll back, restore from saved
// segments (also through the tensors the disk tier stores) and keep the states at restore
// points a prefill crosses, with mlx-lm's logits after each; what they cannot restore they
// say so; broken configs and weights are clear errors.
#include <gtest/gtest.h>

#include <string>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/cache/recurrent_cache.h"
#include "heron/core/error.h"
#include "heron/model/layer_caches.h"
#include "heron/model/loader.h"
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

}  // namespace
}  // namespace heron::model
