// gpt-oss (tests/fixtures/models/tiny-gpt-oss*, made by tools/make_tiny_gpt_oss.py) beyond
// the logits ModelLogits compares: the experts in transformers' float layout (gate and up
// in one tensor, their rows interleaved, every matrix transposed) give mlx-lm's logits;
// llama.cpp's GGUF of the MXFP4 model gives llama.cpp's; broken expert blocks, sinks and
// layer kinds are clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <mlx/io.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/model/loader.h"
#include "temp_model_dir.h"

namespace heron::model {
namespace {

namespace mx = mlx::core;

const std::string kModels = std::string(HERON_FIXTURES) + "/models/";
const std::string kGptOss = kModels + "tiny-gpt-oss";

// Gate's and up's rows alternating along axis 1: [E, I, ...] twice -> [E, 2I, ...].
mx::array interleaved(const mx::array& gate, const mx::array& up) {
  return mx::flatten(mx::stack({gate, up}, 2), 1, 2);
}

TEST(GptOss, TransformersFloatExpertsGiveMlxLmsLogits) {
  test::TempModelDir dir("heron-gpt-oss-transformers", kGptOss);
  auto weights = mx::load_safetensors(kGptOss + "/model.safetensors").first;
  const int layers = 3;
  for (int i = 0; i < layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".mlp.experts.";
    auto take = [&](const std::string& name) {
      auto a = weights.at(p + name);
      weights.erase(p + name);
      return a;
    };
    const auto gate = take("gate_proj.weight"), up = take("up_proj.weight");
    const auto gate_bias = take("gate_proj.bias"), up_bias = take("up_proj.bias");
    // transformers multiplies x @ gate_up_proj: [E, hidden, 2I]; down_proj [E, I, hidden].
    weights.insert_or_assign(p + "gate_up_proj", mx::swapaxes(interleaved(gate, up), 1, 2));
    weights.insert_or_assign(p + "gate_up_proj_bias", interleaved(gate_bias, up_bias));
    weights.insert_or_assign(p + "down_proj", mx::swapaxes(take("down_proj.weight"), 1, 2));
    weights.insert_or_assign(p + "down_proj_bias", take("down_proj.bias"));
  }
  dir.write_weights(weights);

  auto ref = mx::load_safetensors(kGptOss + "/reference_logits.safetensors").first;
  auto tokens = mx::astype(ref.at("tokens"), mx::int32);
  mx::eval(tokens);
  const std::vector<int> ids(tokens.data<int32_t>(), tokens.data<int32_t>() + tokens.size());
  auto loaded = load_model(dir.path(), LoadOptions{.dtype = mx::float32, .load_tokenizer = false});
  auto caches = loaded.model->make_caches();
  auto logits = mx::squeeze(loaded.model->forward(Batch::single(ids, 0), caches).logits, 0);
  const auto& expected = ref.at("logits");
  const float err = mx::max(mx::abs(mx::subtract(logits, expected))).item<float>() /
                    mx::max(mx::abs(expected)).item<float>();
  EXPECT_LE(err, 1e-4f);
}

// The MXFP4 model in llama.cpp's gpt-oss GGUF layout (ggml's MXFP4 blocks, attn_sinks,
// post_attention_norm; tools/make_tiny_gpt_oss.py) gives the same logits as the Hugging
// Face files of the same weights, and llama.cpp's. llama.cpp's CPU multiplies MXFP4 by
// activations rounded to 8 bits (Q8_0), so its logits sit about 2% from exact ones at each
// position, more where a rounded activation flips an expert choice: the bound is on the
// median over positions (measured 0.018 with mlx-lm's logits of the same files; without
// the sinks, YaRN's attention factor, or with gate and up swapped, 0.2 and more).
TEST(GptOss, GgufGivesLlamaCppsLogits) {
  const std::string gguf = std::string(HERON_FIXTURES) + "/gguf/tiny-gpt-oss";
  auto ref = mx::load_safetensors(gguf + ".llamacpp.safetensors").first;
  auto tokens = mx::astype(ref.at("tokens"), mx::int32);
  mx::eval(tokens);
  const std::vector<int> ids(tokens.data<int32_t>(), tokens.data<int32_t>() + tokens.size());
  const LoadOptions load{.dtype = mx::float32, .load_tokenizer = false};
  auto logits = [&](const std::string& path) {
    auto loaded = load_model(path, load);
    auto caches = loaded.model->make_caches();
    return mx::squeeze(loaded.model->forward(Batch::single(ids, 0), caches).logits, 0);
  };
  const auto ours = logits(gguf + ".gguf");
  const auto hf = logits(kModels + "tiny-gpt-oss-mxfp4");
  EXPECT_TRUE(mx::array_equal(ours, hf).item<bool>());

  const auto& expected = ref.at("logits");
  auto per_position =
      mx::divide(mx::max(mx::abs(mx::subtract(ours, expected)), 1), mx::max(mx::abs(expected)));
  per_position = mx::sort(per_position);
  mx::eval(per_position);
  const float median = per_position.data<float>()[per_position.size() / 2];
  std::printf("median relative error against llama.cpp over %zu positions: %.3g\n", ids.size(),
              median);
  EXPECT_LE(median, 0.05f);
}

TEST(GptOss, BrokenBlocksSinksAndLayerKindsAreClearErrors) {
  const std::string mxfp4 = kModels + "tiny-gpt-oss-mxfp4";
  test::TempModelDir dir("heron-gpt-oss-broken", mxfp4);
  const auto weights = mx::load_safetensors(mxfp4 + "/model.safetensors").first;
  const std::string blocks = "model.layers.1.mlp.experts.gate_up_proj_blocks";

  auto flat = weights;
  const auto& b = weights.at(blocks);
  flat.insert_or_assign(blocks, mx::reshape(b, {b.shape(0), b.shape(1), -1}));
  dir.write_weights(flat);
  EXPECT_NE(dir.load_error().find("'" + blocks + "' is not MXFP4 blocks"), std::string::npos)
      << dir.load_error();

  auto sinks = weights;
  sinks.insert_or_assign("model.layers.0.self_attn.sinks", mx::zeros({3}));
  dir.write_weights(sinks);
  EXPECT_NE(dir.load_error().find("'model.layers.0.self_attn.sinks' must hold one value per "
                                  "attention head"),
            std::string::npos)
      << dir.load_error();

  dir.write_weights(weights);
  EXPECT_EQ(dir.load_error(), "(loaded)");
  dir.edit_config([](nlohmann::json& c) { c["layer_types"] = {"full_attention"}; });
  EXPECT_NE(dir.load_error().find("'layer_types' must name the kind of each of the 3 layers"),
            std::string::npos)
      << dir.load_error();
  dir.edit_config([](nlohmann::json& c) {
    c["layer_types"] = {"full_attention", "sliding", "full_attention"};
  });
  EXPECT_NE(dir.load_error().find("'layer_types' holds \"sliding\""), std::string::npos)
      << dir.load_error();
}

}  // namespace
}  // namespace heron::model
