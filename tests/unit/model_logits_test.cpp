// Our forward pass against mlx-lm's logits on the same tiny random weights
// (tests/fixtures/models/*, made by tools/make_tiny_models.py and
// tools/make_reference_logits.py).
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "heron/core/error.h"
#include "heron/model/layer_caches.h"
#include "heron/model/loader.h"
#include "test_precision.h"

namespace mx = mlx::core;
using heron::model::Batch;
using heron::model::LoadOptions;

namespace {

const std::string kModels = std::string(HERON_FIXTURES) + "/models/";

// HERON_TEST_DTYPE picks the compute type; see test_precision.h for the tolerances.
const heron::test::Precision kPrecision = heron::test::test_precision();
const float kRelTol = kPrecision.logits_rel_tol;
const LoadOptions kLoad{.dtype = kPrecision.dtype, .load_tokenizer = false};

float relative_error(const mx::array& ours, const mx::array& ref) {
  auto err = mx::max(mx::abs(mx::subtract(mx::astype(ours, mx::float32), ref))).item<float>();
  return err / mx::max(mx::abs(ref)).item<float>();
}

std::vector<int> to_vector(const mx::array& tokens) {
  auto t = mx::astype(tokens, mx::int32);
  mx::eval(t);
  return {t.data<int32_t>(), t.data<int32_t>() + t.size()};
}

class ModelLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelLogits, FullSequenceMatchesMlxLm) {
  const auto dir = kModels + GetParam();
  auto ref = mx::load_safetensors(dir + "/reference_logits.safetensors").first;
  auto tokens = to_vector(ref.at("tokens"));
  auto loaded = heron::model::load_model(dir, kLoad);
  auto caches = loaded.model->make_caches();
  auto logits = loaded.model->forward(Batch::single(tokens, 0), caches).logits;
  ASSERT_EQ(logits.shape(),
            (mx::Shape{1, static_cast<int>(tokens.size()), ref.at("logits").shape(1)}));
  const float err = relative_error(mx::squeeze(logits, 0), ref.at("logits"));
  std::cout << "  " << kPrecision.name << " relative error: " << err << "\n";
  EXPECT_LE(err, kRelTol);
}

// Prefill a prefix, then one token at a time through the KV cache.
TEST_P(ModelLogits, IncrementalDecodeMatchesMlxLm) {
  const auto dir = kModels + GetParam();
  auto ref = mx::load_safetensors(dir + "/reference_logits.safetensors").first;
  auto tokens = to_vector(ref.at("tokens"));
  const auto& expected = ref.at("logits");
  auto loaded = heron::model::load_model(dir, kLoad);
  auto caches = loaded.model->make_caches();
  const int prefix = 25;
  std::vector<int> head(tokens.begin(), tokens.begin() + prefix);
  auto first = loaded.model->forward(Batch::single(head, 0), caches).logits;
  EXPECT_LE(relative_error(mx::squeeze(first, 0),
                           mx::slice(expected, {0, 0}, {prefix, expected.shape(1)})),
            kRelTol);
  for (int i = prefix; i < static_cast<int>(tokens.size()); ++i) {
    auto step = loaded.model->forward(Batch::single(std::vector<int>{tokens[i]}, i), caches).logits;
    auto row = mx::slice(expected, {i, 0}, {i + 1, expected.shape(1)});
    ASSERT_LE(relative_error(mx::reshape(step, row.shape()), row), kRelTol) << "position " << i;
  }
  EXPECT_EQ(caches[0]->offset(), static_cast<int>(tokens.size()));
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ModelLogits,
                         ::testing::Values("tiny-llama", "tiny-llama3", "tiny-qwen3",
                                           "tiny-llama-sharded", "tiny-gemma3", "tiny-qwen3-moe",
                                           "tiny-gpt-oss", "tiny-gpt-oss-mxfp4",
                                           "tiny-glm4-moe-lite", "tiny-qwen3-next",
                                           "tiny-qwen3-5", "tiny-qwen3-5-moe"));

// Sliding-window layers in rings of window + 3 (tiny-gemma3's window is 8 of its 64
// positions, tiny-gpt-oss's 4), so they wrap many times: prefill longer than the ring,
// chunks that wrap it, single steps, a rollback and a restore from saved segments all
// give mlx-lm's logits. Layer 0 slides in both; layer 2 of Gemma 3 and 1 of gpt-oss
// attend to everything.
struct WindowedModel {
  std::string name;
  int global_layer;
};

class SlidingWindowRing : public ::testing::TestWithParam<WindowedModel> {};

TEST_P(SlidingWindowRing, GivesMlxLmsLogitsWhileTheRingWraps) {
  const auto dir = kModels + GetParam().name;
  const int global = GetParam().global_layer;
  auto ref = mx::load_safetensors(dir + "/reference_logits.safetensors").first;
  auto tokens = to_vector(ref.at("tokens"));
  const auto& expected = ref.at("logits");
  auto loaded = heron::model::load_model(dir, kLoad);
  const auto& config = loaded.model->config();
  ASSERT_LT(config.sliding_window + 3, 25);
  auto rows = [&](int from, int to) {
    return mx::slice(expected, {from, 0}, {to, expected.shape(1)});
  };
  auto forward = [&](heron::cache::Caches& caches, int from, int to) {
    std::vector<int> part(tokens.begin() + from, tokens.begin() + to);
    auto logits = loaded.model->forward(Batch::single(part, from), caches).logits;
    return relative_error(mx::squeeze(logits, 0), rows(from, to));
  };
  auto caches = heron::model::make_layer_caches(config, 3);
  EXPECT_LE(forward(caches, 0, 25), kRelTol);
  for (int at = 25; at < 40; at += 3) ASSERT_LE(forward(caches, at, at + 3), kRelTol) << at;
  for (int at = 40; at < 48; ++at) ASSERT_LE(forward(caches, at, at + 1), kRelTol) << at;
  // Roll back three positions (a rejected draft) and take them again.
  for (auto& c : caches) c->rewind(3);
  EXPECT_LE(forward(caches, 45, 48), kRelTol);
  // Save every cache's state, continue in fresh caches from it.
  std::vector<heron::cache::SegmentPtr> saved;
  for (auto& c : caches) saved.push_back(c->save(0, 48));
  auto restored = heron::model::make_layer_caches(config, 3);
  for (size_t i = 0; i < restored.size(); ++i) restored[i]->load(*saved[i]);
  for (int at = 48; at < 64; ++at) ASSERT_LE(forward(restored, at, at + 1), kRelTol) << at;
  ASSERT_EQ(config.window_of_layer(0), config.sliding_window);
  ASSERT_EQ(config.window_of_layer(global), 0);
  EXPECT_LT(restored[0]->nbytes(), restored[global]->nbytes());  // the ring, a full cache
  EXPECT_EQ(restored[0]->offset(), 64);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, SlidingWindowRing,
                         ::testing::Values(WindowedModel{"tiny-gemma3", 2},
                                           WindowedModel{"tiny-gpt-oss", 1}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.name.substr(5);  // no "tiny-"
                           std::erase(name, '-');
                           return name;
                         });

TEST(ModelLoading, UnknownArchitectureIsAClearError) {
  auto dir = std::filesystem::temp_directory_path() / "heron-unknown-arch";
  std::filesystem::create_directories(dir);
  std::filesystem::copy(kModels + "tiny-llama/model.safetensors", dir / "model.safetensors",
                        std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "config.json") << R"({"model_type": "mamba9", "vocab_size": 512,
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128})";
  try {
    heron::model::load_model(dir, LoadOptions{.load_tokenizer = false});
    FAIL() << "expected an error";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported architecture 'mamba9'"), std::string::npos)
        << e.what();
  }
}

TEST(ModelLoading, BadConfigValuesAreClearErrors) {
  auto dir = std::filesystem::temp_directory_path() / "heron-bad-config";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "llama", "vocab_size": -3,
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128})";
  try {
    heron::model::load_model(dir);
    FAIL() << "expected an error";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'vocab_size' = -3 is out of range"), std::string::npos)
        << e.what();
  }
}

}  // namespace
