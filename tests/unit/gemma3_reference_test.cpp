// Gemma 3 270M Q4_K_M (the model name 'gemma3': Q8_0, Q5_0, Q4_K and Q6_K tensors,
// sliding-window layers) against llama.cpp on the same file
// (tests/fixtures/gemma3_llamacpp.json, from tools/make_gemma3_reference.py): the
// tokenizer gives llama.cpp's ids, the teacher-forced argmax agrees at every one of 407
// positions but near-ties, and greedy continuations part only at near-ties.
//
// llama.cpp rounds activations to 8 bits in its CPU matmuls, which moves this model's
// logits more than SmolLM2's: an exact float64 forward over the same dequantized weights
// (in the fixture too) disagrees with llama.cpp at 12 of the 407 positions, at llama.cpp
// margins up to 0.36. So against llama.cpp a near-tie is a margin below 0.4, and against
// the exact forward, which we must follow as closely as mlx-lm does, below 0.01.
#include <gtest/gtest.h>

#include <algorithm>

#include "heron/core/default_model.h"
#include "reference_agreement.h"
#include "test_precision.h"

namespace {
using namespace heron::test;

const double kLlamaCppNearTie = std::max(0.4, test_precision().near_tie);
const double kExactNearTie = test_precision().near_tie;

class Gemma3 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new heron::model::LoadedModel(heron::model::load_model(
        heron::gemma3_model_path(), heron::model::LoadOptions{.dtype = test_precision().dtype}));
  }
  static void TearDownTestSuite() { delete loaded_; }
  static heron::model::LoadedModel* loaded_;
};

heron::model::LoadedModel* Gemma3::loaded_ = nullptr;

TEST_F(Gemma3, TokenizerGivesLlamaCppIds) {
  const auto reference = read_fixture("gemma3_llamacpp.json");
  const auto& tf = reference["teacher_forced"];
  EXPECT_EQ(loaded_->tokenizer->encode(tf["text"].get<std::string>()),
            tf["tokens"].get<std::vector<int>>());
  for (const auto& g : reference["greedy"]) {
    EXPECT_EQ(loaded_->tokenizer->encode(g["prompt"].get<std::string>()),
              g["prompt_tokens"].get<std::vector<int>>());
  }
}

TEST_F(Gemma3, TeacherForcedArgmaxAgreesWithLlamaCpp) {
  expect_teacher_forced_agreement(*loaded_, read_fixture("gemma3_llamacpp.json"), kLlamaCppNearTie,
                                  400);
}

TEST_F(Gemma3, TeacherForcedArgmaxAgreesWithExactMath) {
  auto reference = read_fixture("gemma3_llamacpp.json");
  reference["teacher_forced"]["argmax"] = reference["exact_float64"]["argmax"];
  reference["teacher_forced"]["margin"] = reference["exact_float64"]["margin"];
  expect_teacher_forced_agreement(*loaded_, reference, kExactNearTie, 400);
}

TEST_F(Gemma3, GreedyContinuationsAgreeWithLlamaCpp) {
  const auto reference = read_fixture("gemma3_llamacpp.json");
  ASSERT_EQ(reference["greedy"].size(), 5u);
  for (const auto& g : reference["greedy"]) {
    const auto same = expect_greedy_agreement(*loaded_, g, kLlamaCppNearTie);
    std::cout << "  " << g["prompt"] << ": " << same << " tokens agree\n";
  }
}

}  // namespace
