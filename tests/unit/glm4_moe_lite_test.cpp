// GLM-4.7-Flash (tests/fixtures/models/tiny-glm4-moe-lite, made by
// tools/make_tiny_glm4_moe_lite.py) beyond the logits ModelLogits compares: mlx-lm's own
// layout (kv_b_proj split into embed_q / unembed_out, experts stacked) gives the same
// logits; the latent cache rolls back, saves and restores (also through the tensors the
// disk tier stores) and keeps only a latent and a rotary key per position, which the
// attention kernel reads in place; broken configs
// and weights are clear errors.
#include <gtest/gtest.h>

#include <string>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/model/loader.h"
#include "mlx_lm_reference.h"
#include "temp_model_dir.h"

namespace heron::model {
namespace {

namespace mx = mlx::core;

const std::string kGlm = std::string(HERON_FIXTURES) + "/models/tiny-glm4-moe-lite";
const LoadOptions kLoad{.dtype = mx::float32, .load_tokenizer = false};

test::MlxLmReference reference() {
  return test::mlx_lm_reference(kGlm);
}

float relative_error(const mx::array& ours, const mx::array& ref) {
  return test::relative_error_to(ours, ref);
}

TEST(Glm4MoeLite, MlxLmsLayoutGivesMlxLmsLogits) {
  test::TempModelDir dir("heron-glm-mlx-layout", kGlm);
  auto weights = mx::load_safetensors(kGlm + "/model.safetensors").first;
  const auto config = nlohmann::json::parse(std::ifstream(kGlm + "/config.json"));
  const int heads = config["num_attention_heads"], nope = config["qk_nope_head_dim"];
  const int v = config["v_head_dim"], rank = config["kv_lora_rank"];
  const int experts = config["n_routed_experts"];
  auto take = [&](const std::string& name) {
    auto a = weights.at(name);
    weights.erase(name);
    return a;
  };
  for (int i = 0; i < 3; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    auto kv_b = mx::reshape(take(p + ".self_attn.kv_b_proj.weight"), {heads, nope + v, rank});
    weights.insert_or_assign(p + ".self_attn.embed_q.weight",
                             mx::swapaxes(mx::slice(kv_b, {0, 0, 0}, {heads, nope, rank}), 1, 2));
    weights.insert_or_assign(p + ".self_attn.unembed_out.weight",
                             mx::slice(kv_b, {0, nope, 0}, {heads, nope + v, rank}));
    if (i == 0) continue;  // dense
    for (const std::string proj : {"gate_proj", "up_proj", "down_proj"}) {
      std::vector<mx::array> stacked;
      stacked.reserve(experts);
      for (int e = 0; e < experts; ++e) {
        stacked.push_back(take(p + ".mlp.experts." + std::to_string(e) + "." + proj + ".weight"));
      }
      weights.insert_or_assign(p + ".mlp.switch_mlp." + proj + ".weight", mx::stack(stacked));
    }
  }
  dir.write_weights(weights);
  const auto ref = reference();
  auto loaded = load_model(dir.path(), kLoad);
  auto caches = loaded.model->make_caches();
  auto logits = loaded.model->forward(Batch::single(ref.tokens, 0), caches).logits;
  EXPECT_LE(relative_error(mx::squeeze(logits, 0), ref.logits), 1e-4f);
}

// Chunks, single steps, a rollback of three positions (a rejected draft), then fresh
// caches restored from saved segments, one of them rebuilt from its stored tensors as the
// disk tier does: mlx-lm's logits all along.
TEST(Glm4MoeLite, LatentCacheRollsBackAndRestores) {
  const auto ref = reference();
  auto loaded = load_model(kGlm, kLoad);
  const auto& model = *loaded.model;
  auto forward = [&](cache::Caches& caches, int from, int to) {
    std::vector<int> part(ref.tokens.begin() + from, ref.tokens.begin() + to);
    auto logits = mx::squeeze(model.forward(Batch::single(part, from), caches).logits, 0);
    return relative_error(logits, mx::slice(ref.logits, {from, 0}, {to, ref.logits.shape(1)}));
  };
  auto caches = model.make_caches();
  EXPECT_LE(forward(caches, 0, 25), 1e-4f);
  for (int at = 25; at < 40; at += 3) ASSERT_LE(forward(caches, at, at + 3), 1e-4f) << at;
  for (int at = 40; at < 48; ++at) ASSERT_LE(forward(caches, at, at + 1), 1e-4f) << at;
  for (auto& c : caches) c->rewind(3);
  EXPECT_LE(forward(caches, 45, 48), 1e-4f);

  auto restored = model.make_caches();
  for (size_t i = 0; i < caches.size(); ++i) {
    auto saved = caches[i]->save(0, 48);
    if (i == 1) saved = caches[i]->segment_from(0, 48, saved->tensors());
    restored[i]->load(*saved);
  }
  for (int at = 48; at < 64; ++at) ASSERT_LE(forward(restored, at, at + 1), 1e-4f) << at;

  // A latent of 32 and a rotary key of 16 float32 values per position, in 256-position
  // steps, saved as one row per position.
  EXPECT_EQ(restored[0]->nbytes(), size_t{256} * (32 + 16) * 4);
  const auto tensors = restored[2]->save(0, 64)->tensors();
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(tensors[0].shape(), (mx::Shape{1, 1, 64, 48}));
  // Stored tensors of another shape are refused.
  EXPECT_THROW(caches[0]->segment_from(0, 64, {tensors[0], tensors[0]}), Error);
  const auto latents_only = mx::slice(tensors[0], {0, 0, 0, 0}, {1, 1, 64, 32});
  EXPECT_THROW(model.make_caches()[0]->segment_from(0, 64, {latents_only}), Error);
  const auto too_wide = mx::concatenate({tensors[0], latents_only}, 3);
  EXPECT_THROW(model.make_caches()[0]->segment_from(0, 64, {too_wide}), Error);
}

// llama.cpp's GGUF of the same weights (architecture deepseek2: attn_k_b / attn_v_b,
// exp_probs_b, sigmoid gating in two groups; tools/make_tiny_glm4_moe_lite.py): llama.cpp's
// logits (float32 there too: 1.1e-6 from mlx-lm's), and the Hugging Face files'.
TEST(Glm4MoeLite, GgufGivesLlamaCppsLogits) {
  const std::string gguf = std::string(HERON_FIXTURES) + "/gguf/tiny-glm4-moe-lite";
  auto llama_cpp = mx::load_safetensors(gguf + ".llamacpp.safetensors").first;
  const auto ref = reference();
  ASSERT_TRUE(mx::array_equal(mx::astype(llama_cpp.at("tokens"), mx::int32),
                              mx::array(ref.tokens.data(), {static_cast<int>(ref.tokens.size())}))
                  .item<bool>());
  auto logits = [&](const std::string& path) {
    auto loaded = load_model(path, kLoad);
    auto caches = loaded.model->make_caches();
    return mx::squeeze(loaded.model->forward(Batch::single(ref.tokens, 0), caches).logits, 0);
  };
  const auto ours = logits(gguf + ".gguf");
  EXPECT_LE(relative_error(ours, llama_cpp.at("logits")), 1e-4f);
  EXPECT_LE(relative_error(ours, logits(kGlm)), 1e-5f);
}

TEST(Glm4MoeLite, BrokenConfigsAndWeightsAreClearErrors) {
  test::TempModelDir dir("heron-glm-broken", kGlm);
  auto weights = mx::load_safetensors(kGlm + "/model.safetensors").first;
  auto expect_error = [&](const std::string& what) {
    const auto error = dir.load_error();
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  auto edited = [&](const std::string& name, const mx::array& a) {
    auto w = weights;
    w.insert_or_assign(name, a);
    dir.write_weights(w);
  };
  edited("model.layers.1.mlp.gate.e_score_correction_bias", mx::zeros({3}));
  expect_error("'model.layers.1.mlp.gate.e_score_correction_bias' must hold one value per expert");
  edited("model.layers.2.self_attn.kv_b_proj.weight", mx::zeros({8, 32}));
  expect_error("'model.layers.2.self_attn.kv_b_proj.weight' must be [256, 32]");
  dir.write_weights(weights);
  EXPECT_EQ(dir.load_error(), "(loaded)");

  dir.edit_config([](nlohmann::json& c) { c["topk_method"] = "greedy"; });
  expect_error("only the 'noaux_tc' top-k method with 'sigmoid' scores is supported");
  dir.edit_config([](nlohmann::json& c) {
    c["topk_method"] = "noaux_tc";
    c["n_group"] = 3;
  });
  expect_error("'n_routed_experts' must split into 'n_group' groups of at least 2");
  dir.edit_config([](nlohmann::json& c) {
    c["n_group"] = 2;
    c["first_k_dense_replace"] = 9;
  });
  expect_error("'first_k_dense_replace' must be a number of layers (0..3)");
  dir.edit_config([](nlohmann::json& c) {
    c["first_k_dense_replace"] = 1;
    c.erase("kv_lora_rank");
  });
  expect_error("missing 'kv_lora_rank'");
}

}  // namespace
}  // namespace heron::model
