// min_p, repetition penalties, logprobs and option validation, against hand-computed
// expectations (temperature 0 turns "which token wins" into an exact check).
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <cmath>
#include <map>

#include "heron/core/error.h"
#include "heron/sample/logprobs.h"
#include "heron/sample/sampler.h"

namespace mx = mlx::core;
using heron::sample::LogprobOptions;
using heron::sample::Sampler;
using heron::sample::SamplingOptions;

namespace {

mx::array raw(const std::vector<float>& logits) {
  return mx::array(logits.data(), {1, static_cast<int>(logits.size())}, mx::float32);
}

mx::array from_probs(const std::vector<float>& probs) {
  std::vector<float> logs;
  for (float p : probs) logs.push_back(std::log(p));
  return raw(logs);
}

int greedy_after(SamplingOptions o, const std::vector<int>& history,
                 const std::vector<float>& logits) {
  o.temperature = 0;
  Sampler s(o);
  s.set_history(history);
  return s(raw(logits)).item<int32_t>();
}

void expect_frequencies(Sampler& s, const mx::array& logits, const std::vector<double>& expected) {
  const int n = 3000;
  std::map<int, int> counts;
  for (int i = 0; i < n; ++i) counts[s(logits).item<int32_t>()]++;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double p = expected[i];
    const double got = counts[static_cast<int>(i)];
    const double sd = std::sqrt(n * p * (1 - p)) + 1e-9;
    EXPECT_LE(std::abs(got - n * p), 5 * sd + (p == 0 ? 0 : 1)) << "token " << i;
  }
}

void expect_error(const SamplingOptions& o, const std::string& field) {
  try {
    Sampler s(o);
    FAIL() << "no error for " << field;
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SamplerPenalties, RepeatPenaltyDividesPositiveLogits) {
  // 2.0 / 1.1 = 1.818 < 1.9: the seen token loses first place.
  SamplingOptions o{.repeat_penalty = 1.1f, .repeat_last_n = 64};
  EXPECT_EQ(greedy_after(o, {0}, {2.0f, 1.9f, -1.0f, 0.5f}), 1);
  o.repeat_last_n = 0;  // off
  EXPECT_EQ(greedy_after(o, {0}, {2.0f, 1.9f, -1.0f, 0.5f}), 0);
}

TEST(SamplerPenalties, RepeatPenaltyMultipliesNegativeLogits) {
  // -1.0 * 1.1 = -1.1 < -1.05.
  EXPECT_EQ(greedy_after({.repeat_penalty = 1.1f}, {0}, {-1.0f, -1.05f}), 1);
}

TEST(SamplerPenalties, FrequencyCountsOccurrences) {
  // Seen 3 times: 3.0 - 3 * 0.4 = 1.8 < 2.0, but 3.0 - 3 * 0.3 = 2.1 > 2.0.
  EXPECT_EQ(greedy_after({.frequency_penalty = 0.4f}, {0, 0, 0}, {3.0f, 2.0f}), 1);
  EXPECT_EQ(greedy_after({.frequency_penalty = 0.3f}, {0, 0, 0}, {3.0f, 2.0f}), 0);
}

TEST(SamplerPenalties, PresenceCountsOnce) {
  // Seen twice, penalised once: 3.0 - 0.6 = 2.4 < 2.5, 3.0 - 0.4 = 2.6 > 2.5.
  EXPECT_EQ(greedy_after({.presence_penalty = 0.6f}, {0, 0}, {3.0f, 2.5f}), 1);
  EXPECT_EQ(greedy_after({.presence_penalty = 0.4f}, {0, 0}, {3.0f, 2.5f}), 0);
}

TEST(SamplerPenalties, WindowIsTheLastNTokens) {
  const std::vector<float> logits = {2.0f, 1.9f, 0.0f, 0.0f};
  SamplingOptions o{.repeat_penalty = 1.1f, .repeat_last_n = 2};
  EXPECT_EQ(greedy_after(o, {0, 2, 3}, logits), 0);  // token 0 fell out of the window
  o.repeat_last_n = 3;
  EXPECT_EQ(greedy_after(o, {0, 2, 3}, logits), 1);
  o.repeat_last_n = -1;  // the whole context
  EXPECT_EQ(greedy_after(o, {0, 2, 3}, logits), 1);
}

TEST(SamplerPenalties, GeneratedTokensJoinTheHistory) {
  // Step 1 picks 0; then 0 is 1.818 < 1.9 so 1 wins; then 0 (1.818) beats 1 (1.727) and 2 (1.8).
  Sampler s({.temperature = 0, .repeat_penalty = 1.1f, .repeat_last_n = -1});
  s.set_history({});
  auto logits = raw({2.0f, 1.9f, 1.8f});
  std::vector<int> got;
  for (int i = 0; i < 3; ++i) got.push_back(s(logits).item<int32_t>());
  EXPECT_EQ(got, (std::vector<int>{0, 1, 0}));
}

TEST(SamplerFilters, MinPKeepsTokensAboveAFractionOfTheTop) {
  // Floor 0.2 * 0.5 = 0.1 drops only the 0.05 token.
  Sampler s({.temperature = 1.0f, .min_p = 0.2f, .seed = 1});
  expect_frequencies(s, from_probs({0.5f, 0.3f, 0.15f, 0.05f}),
                     {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0});
}

TEST(SamplerFilters, TopPThenMinP) {
  // top_p 0.9 keeps 0, 1, 2 (mass before: 0, .5, .8); min_p 0.35 (floor .175) then drops 2.
  Sampler s({.temperature = 1.0f, .top_p = 0.9f, .min_p = 0.35f, .seed = 2});
  expect_frequencies(s, from_probs({0.5f, 0.3f, 0.15f, 0.05f}), {0.625, 0.375, 0, 0});
}

TEST(SamplerLogprobs, RawLogSoftmaxAndTopK) {
  auto lp =
      heron::sample::compute_logprobs(from_probs({0.5f, 0.3f, 0.15f, 0.05f}), mx::array({1}), 2);
  EXPECT_NEAR(lp.logprob.item<float>(), std::log(0.3f), 1e-5);
  ASSERT_TRUE(lp.top_ids.has_value());
  mx::eval({*lp.top_ids, *lp.top_logprobs});
  EXPECT_EQ(lp.top_ids->data<int32_t>()[0], 0);
  EXPECT_EQ(lp.top_ids->data<int32_t>()[1], 1);
  EXPECT_NEAR(lp.top_logprobs->data<float>()[0], std::log(0.5f), 1e-5);
  EXPECT_NEAR(lp.top_logprobs->data<float>()[1], std::log(0.3f), 1e-5);
}

TEST(SamplerLogprobs, IgnorePenaltiesAndTemperature) {
  // The penalty makes token 1 win, but its logprob is that of the unmodified logits.
  Sampler s({.temperature = 0, .repeat_penalty = 1.5f}, LogprobOptions{true, 1});
  s.set_history({0});
  auto draw = s.sample(from_probs({0.5f, 0.4f, 0.1f}));
  EXPECT_EQ(draw.token.item<int32_t>(), 1);
  EXPECT_NEAR(draw.logprobs->logprob.item<float>(), std::log(0.4f), 1e-5);
  EXPECT_EQ(draw.logprobs->top_ids->item<int32_t>(), 0);
}

TEST(SamplerValidation, MessagesNameTheField) {
  expect_error({.min_p = 1.5f}, "min_p");
  expect_error({.min_p = NAN}, "min_p");
  expect_error({.repeat_penalty = 0.0f}, "repeat_penalty");
  expect_error({.repeat_last_n = -2}, "repeat_last_n");
  expect_error({.presence_penalty = INFINITY}, "presence_penalty");
  expect_error({.frequency_penalty = NAN}, "frequency_penalty");
  expect_error({.temperature = NAN}, "temperature");
  EXPECT_THROW(Sampler({}, LogprobOptions{true, 21}), heron::Error);
  EXPECT_THROW(Sampler({}, LogprobOptions{true, -1}), heron::Error);
}
