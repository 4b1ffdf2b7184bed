// engine::Scheduler (continuous batching): every row of a batch gives exactly the tokens
// it gives alone through engine::generate, greedy and seeded sampling, with prompts of
// different lengths prefilled in chunks beside decoding rows, more requests than rows (the
// rest join as rows leave), a row that stops and a row cancelled mid-batch, on a plain, a
// sliding-window and a hybrid recurrent architecture (float32).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>

#include "heron/core/error.h"
#include "heron/engine/generator.h"
#include "heron/engine/scheduler.h"
#include "heron/model/loader.h"

namespace heron::engine {
namespace {

namespace mx = mlx::core;

const model::LoadOptions kLoad{.dtype = mx::float32, .load_tokenizer = false};

std::vector<int> prompt(int n, int salt) {
  std::vector<int> p;
  p.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + salt * 13) % 400);
  return p;
}

GenerateOptions options_for(int i) {
  GenerateOptions o;
  o.max_tokens = 8 + 3 * i;
  o.ignore_eos = true;
  o.prefill_chunk = 7;
  if (i % 2 == 0) {
    o.sampling.temperature = 0;
  } else {  // seeded sampling, with penalties on one row
    o.sampling = {.temperature = 1.0f, .top_k = 50, .seed = 100 + static_cast<uint64_t>(i)};
    if (i == 3) o.sampling.presence_penalty = 3.0f;
  }
  return o;
}

// What a request gives alone.
std::vector<int> alone(const model::Model& model, const std::vector<int>& p,
                       const GenerateOptions& o, int stop_after) {
  cache::PrefixCache cache(model.make_caches(), {});
  std::vector<int> out;
  generate(model, cache, p, o, [&](const TokenStep& t) {
    out.push_back(t.id);
    return static_cast<int>(out.size()) == stop_after ? Next::Stop : Next::Continue;
  });
  return out;
}

class Scheduling : public ::testing::TestWithParam<std::string> {};

TEST_P(Scheduling, EveryRowGivesTheTokensItGivesAlone) {
  auto loaded = model::load_model(std::string(HERON_FIXTURES) + "/models/" + GetParam(), kLoad);
  const auto& model = *loaded.model;
  constexpr int kRequests = 6;
  constexpr int kStopping = 2;   // asks to stop after 4 tokens
  constexpr int kCancelled = 4;  // cancelled after its 3rd token, while others decode
  Scheduler scheduler(model, /*max_rows=*/3, /*prefill_budget=*/10);
  std::map<int, std::vector<int>> got;
  std::map<int, std::string> reasons;
  std::atomic<bool> cancel{false};
  for (int i = 0; i < kRequests; ++i) {
    RowRequest r;
    r.prompt = prompt(5 + 6 * i, i);
    r.options = options_for(i);
    if (i == kCancelled) r.options.cancelled = [&cancel] { return cancel.load(); };
    r.on_token = [&, i](const TokenStep& t) {
      got[i].push_back(t.id);
      if (i == kCancelled && got[i].size() == 3) cancel = true;
      return i == kStopping && got[i].size() == 4 ? Next::Stop : Next::Continue;
    };
    r.on_done = [&, i](const GenerateStats& s) {
      EXPECT_EQ(reasons.count(i), 0U) << "request " << i << " finished twice";
      reasons[i] = s.done_reason;
      EXPECT_EQ(s.decode_tokens, static_cast<int>(got[i].size()));
    };
    scheduler.add(std::move(r));
  }
  EXPECT_EQ(scheduler.waiting(), kRequests);
  int steps = 0;
  while (!scheduler.idle()) {
    scheduler.step();
    EXPECT_LE(scheduler.rows(), 3);
    ASSERT_LT(++steps, 500);
  }
  for (int i = 0; i < kRequests; ++i) {
    const auto o = options_for(i);
    auto expected = alone(model, prompt(5 + 6 * i, i), o, i == kStopping ? 4 : -1);
    if (i == kCancelled) {
      EXPECT_EQ(reasons[i], "cancelled");
      ASSERT_EQ(got[i].size(), 3U);  // the step after its 3rd token saw the flag
      expected.resize(3);
    } else {
      EXPECT_EQ(reasons[i], i == kStopping ? "stop" : "length") << "request " << i;
    }
    EXPECT_EQ(got[i], expected) << "request " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, Scheduling,
                         ::testing::Values("tiny-llama", "tiny-gemma3", "tiny-qwen3-next"),
                         [](const auto& param_info) {
                           std::string name = param_info.param.substr(5);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(SchedulerInput, PromptsThatCannotRunAreClearErrorsAndANoTokenBudgetEndsAtOnce) {
  auto loaded = model::load_model(std::string(HERON_FIXTURES) + "/models/tiny-llama", kLoad);
  Scheduler scheduler(*loaded.model, 2);
  RowRequest empty;
  EXPECT_THROW(scheduler.add(std::move(empty)), Error);
  RowRequest too_long;
  too_long.prompt = prompt(20, 1);
  too_long.options.context_length = 16;
  EXPECT_THROW(scheduler.add(std::move(too_long)), Error);
  EXPECT_TRUE(scheduler.idle());
  RowRequest none;
  none.prompt = prompt(4, 2);
  none.options.max_tokens = 0;
  std::string reason;
  none.on_token = [](const TokenStep&) {
    ADD_FAILURE() << "a row with no budget drew a token";
    return Next::Continue;
  };
  none.on_done = [&](const GenerateStats& s) { reason = s.done_reason; };
  scheduler.add(std::move(none));
  scheduler.step();
  EXPECT_EQ(reason, "length");
  EXPECT_TRUE(scheduler.idle());
}

TEST(SchedulerMemory, RowsWaitForRoomAndARequestThatCannotFitFailsClearly) {
  auto loaded = model::load_model(std::string(HERON_FIXTURES) + "/models/tiny-llama", kLoad);
  const auto& model = *loaded.model;
  // 1000 bytes a token: a 10-token prompt with 8 more reserves 18,000, so two rows fit in
  // 40,000 though four may run.
  Scheduler scheduler(model, /*max_rows=*/4, 512, {.budget = 40000, .per_token = 1000});
  std::map<int, std::vector<int>> got;
  std::map<int, std::string> errors;
  int done = 0;
  auto request = [&](int i, int max_tokens) {
    RowRequest r;
    r.prompt = prompt(10, i);
    r.options.max_tokens = max_tokens;
    r.options.ignore_eos = true;
    r.options.sampling.temperature = 0;
    r.on_token = [&got, i](const TokenStep& t) {
      got[i].push_back(t.id);
      return Next::Continue;
    };
    r.on_done = [&done](const GenerateStats&) { ++done; };
    r.on_error = [&errors, i](const std::exception& e) {
      EXPECT_NE(dynamic_cast<const NoRoom*>(&e), nullptr) << e.what();
      errors[i] = e.what();
    };
    return r;
  };
  for (int i = 0; i < 4; ++i) scheduler.add(request(i, 8));
  scheduler.add(request(4, 40));  // 50,000 bytes: never fits
  int most = 0;
  while (!scheduler.idle()) {
    scheduler.step();
    most = std::max(most, scheduler.rows());
  }
  EXPECT_EQ(most, 2);
  EXPECT_EQ(done, 4);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_NE(errors[4].find("more than the"), std::string::npos) << errors[4];
  GenerateOptions o;
  o.max_tokens = 8;
  o.ignore_eos = true;
  o.sampling.temperature = 0;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], alone(model, prompt(10, i), o, -1)) << i;
}

}  // namespace
}  // namespace heron::engine
