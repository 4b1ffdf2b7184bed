// SlotSampler (continuous batching's sampler): each slot of a batch draws exactly the
// token its own Sampler draws from the same logits, step after step, whoever its batch
// mates are: slots that share filters (one pass) or not, penalties with histories of
// different lengths, greedy, top-p and min-p, a grammar's mask, logprobs, subsets of the
// slots in any order, and slots that leave and join.
#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <map>
#include <optional>
#include <vector>

#include "heron/core/error.h"
#include "heron/sample/slot_sampler.h"

namespace heron::sample {
namespace {

namespace mx = mlx::core;

constexpr int kVocab = 64;

struct Slot {
  SamplingOptions options;
  LogprobOptions logprobs;
  std::vector<int> history;
  bool grammar = false;  // only even tokens allowed
};

class SlotSampling : public ::testing::Test {
 protected:
  void join(const Slot& s) {
    const int id = slots_.add(s.options, s.logprobs, s.history);
    auto [it, added] = alone_.try_emplace(id, s.options, s.logprobs);
    it->second.set_history(s.history);
    grammar_[id] = s.grammar;
  }

  // One step for `ids`, in that order: the batch's draws against each slot's own.
  void step(const std::vector<int>& ids) {
    const int n = static_cast<int>(ids.size());
    auto logits = mx::multiply(mx::random::normal({n, kVocab}, mx::float32, 0.0f, 1.0f, key_),
                               mx::array(3.0f));
    key_ = mx::random::split(key_).first;
    const auto even = mx::reshape(
        mx::equal(mx::remainder(mx::arange(kVocab), mx::array(2)), mx::array(0)), {1, kVocab});
    std::vector<std::optional<mx::array>> allowed;
    allowed.reserve(ids.size());
    for (int id : ids) allowed.push_back(grammar_[id] ? std::optional(even) : std::nullopt);
    auto draws = slots_.sample(logits, ids, allowed);
    for (int r = 0; r < n; ++r) {
      auto row = mx::slice(logits, {r, 0}, {r + 1, kVocab});
      auto& alone = alone_.at(ids[r]);
      auto own = alone.sample(row, allowed[r]);
      auto& ours = draws[r];
      ASSERT_EQ(ours.token.item<int32_t>(), own.token.item<int32_t>())
          << "slot " << ids[r] << " at step " << steps_;
      if (grammar_[ids[r]]) {
        EXPECT_EQ(ours.token.item<int32_t>() % 2, 0);
      }
      ASSERT_EQ(ours.logprobs.has_value(), own.logprobs.has_value());
      if (own.logprobs) {
        EXPECT_FLOAT_EQ(ours.logprobs->logprob.item<float>(), own.logprobs->logprob.item<float>());
        EXPECT_TRUE(mx::array_equal(*ours.logprobs->top_ids, *own.logprobs->top_ids).item<bool>());
      }
    }
    ++steps_;
  }

  SlotSampler slots_;
  std::map<int, Sampler> alone_;
  std::map<int, bool> grammar_;
  mx::array key_ = mx::random::key(7);
  int steps_ = 0;
};

const SamplingOptions kTopK{.temperature = 1.0f, .top_k = 20};
const SamplingOptions kPenalties{.temperature = 1.0f,
                                 .top_k = 20,
                                 .repeat_penalty = 1.3f,
                                 .repeat_last_n = 8,
                                 .presence_penalty = 0.5f,
                                 .frequency_penalty = 0.2f};

SamplingOptions seeded(SamplingOptions o, uint64_t seed) {
  o.seed = seed;
  return o;
}

TEST_F(SlotSampling, EverySlotDrawsWhatItsOwnSamplerDraws) {
  join({seeded(kTopK, 11), {}, {}});                 // 0
  join({seeded(kTopK, 12), {}, {}});                 // 1: shares 0's pass
  join({seeded(kPenalties, 13), {}, {1, 2, 3, 5}});  // 2
  join({seeded(kPenalties, 14), {}, {}});            // 3: no history yet, in 2's pass
  join({{.temperature = 0.0f}, {}, {}});             // 4: greedy
  join({{.temperature = 0.7f, .top_p = 0.9f, .min_p = 0.05f, .seed = 15},
        {.enabled = true, .top = 3},
        {},
        true});  // 5: a grammar and logprobs
  for (int i = 0; i < 20; ++i) step({0, 1, 2, 3, 4, 5});
  // Subsets, in other orders.
  for (int i = 0; i < 10; ++i) step({5, 2, 0});
  for (int i = 0; i < 5; ++i) step({3});
  // Slot 1 leaves; slot 6 joins with 0's filters and a prompt; all go on.
  slots_.remove(1);
  alone_.erase(1);
  join({seeded(kPenalties, 16), {}, {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}});  // 6
  for (int i = 0; i < 20; ++i) step({6, 0, 2, 3, 4, 5});
  EXPECT_EQ(slots_.size(), 6);
}

TEST_F(SlotSampling, BadCallsAreClearErrors) {
  join({seeded(kTopK, 1), {}, {}});
  join({seeded(kTopK, 2), {}, {}});
  const auto logits = mx::zeros({2, kVocab});
  EXPECT_THROW(slots_.sample(logits, {0}), Error);                     // two rows, one slot
  EXPECT_THROW(slots_.sample(logits, {0, 0}), Error);                  // a slot twice
  EXPECT_THROW(slots_.sample(logits, {0, 7}), Error);                  // no such slot
  EXPECT_THROW(slots_.sample(logits, {0, 1}, {std::nullopt}), Error);  // one mask entry
  EXPECT_EQ(slots_.slot(0).position(), 0U);                            // nothing was drawn
}

}  // namespace
}  // namespace heron::sample
