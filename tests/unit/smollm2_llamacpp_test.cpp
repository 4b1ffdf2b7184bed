// SmolLM2-135M Q4_1 (the default model) against llama.cpp on the same GGUF file:
// tests/fixtures/smollm2_llamacpp.json, made by tools/make_llamacpp_reference.py.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "heron/core/default_model.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"
#include "heron/template/chatml.h"

namespace mx = mlx::core;
using heron::model::Batch;
using nlohmann::json;

namespace {

class SmolLM2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ifstream in(std::string(HERON_FIXTURES) + "/smollm2_llamacpp.json");
    reference_ = new json(json::parse(in));
    loaded_ = new heron::model::LoadedModel(heron::model::load_model(heron::default_model_path()));
  }
  static void TearDownTestSuite() {
    delete loaded_;
    delete reference_;
  }
  static json* reference_;
  static heron::model::LoadedModel* loaded_;
};

json* SmolLM2::reference_ = nullptr;
heron::model::LoadedModel* SmolLM2::loaded_ = nullptr;

TEST_F(SmolLM2, TeacherForcedArgmaxAgreesWithLlamaCpp) {
  const auto& tf = (*reference_)["teacher_forced"];
  auto tokens = tf["tokens"].get<std::vector<int>>();
  auto expected = tf["argmax"].get<std::vector<int>>();
  ASSERT_GE(tokens.size(), 300u);
  auto caches = loaded_->model->make_caches();
  auto logits = loaded_->model->forward(Batch::single(tokens, 0), caches).logits;
  auto argmax = mx::astype(mx::argmax(mx::squeeze(logits, 0), -1), mx::int32);
  mx::eval(argmax);
  size_t agree = 0;
  for (size_t i = 0; i < expected.size(); ++i) agree += argmax.data<int32_t>()[i] == expected[i];
  const double rate = static_cast<double>(agree) / static_cast<double>(expected.size());
  RecordProperty("agreement", std::to_string(rate));
  EXPECT_GE(rate, 0.99) << agree << " of " << expected.size() << " positions agree";
}

TEST_F(SmolLM2, GreedyContinuationsAgreeWithLlamaCpp) {
  auto chat = heron::chat::ChatMLTemplate::parse(loaded_->tokenizer->chat_template());
  for (const auto& g : (*reference_)["greedy"]) {
    const auto prompt = g["prompt"].get<std::string>();
    // The rendered prompt and its tokens match what llama.cpp was given.
    const auto rendered = chat.render({{"user", prompt}}, true);
    EXPECT_EQ(rendered, g["rendered"].get<std::string>());
    auto ids = loaded_->tokenizer->encode(rendered);
    EXPECT_EQ(ids, g["prompt_tokens"].get<std::vector<int>>()) << prompt;

    auto expected = g["continuation"].get<std::vector<int>>();
    heron::engine::GenerateOptions options;
    options.max_tokens = 16;
    options.ignore_eos = true;
    options.sampling.temperature = 0;
    std::vector<int> ours;
    auto caches = loaded_->model->make_caches();
    heron::engine::generate(*loaded_->model, caches, g["prompt_tokens"].get<std::vector<int>>(),
                            options, [&](int t) {
                              ours.push_back(t);
                              return true;
                            });
    ASSERT_EQ(ours.size(), 16u);
    EXPECT_EQ(ours, std::vector<int>(expected.begin(), expected.begin() + 16)) << prompt;
  }
}

}  // namespace
