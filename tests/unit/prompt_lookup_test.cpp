// The prompt-lookup drafter proposes the continuation of the most recent earlier
// occurrence of the longest matching tail n-gram (n <= 3).
#include <gtest/gtest.h>

#include <vector>

#include "heron/core/error.h"
#include "heron/spec/prompt_lookup.h"

using heron::spec::PromptLookup;

namespace {

std::vector<int> propose_after(const std::vector<int>& sequence, int max) {
  PromptLookup lookup;
  lookup.reset({});
  lookup.committed(sequence);
  return lookup.propose(max).tokens;
}

}  // namespace

TEST(PromptLookup, ContinuesTheLongestMatchingNgram) {
  // "5 6 7" occurred followed by 8 9; "7" alone more recently, followed by 1.
  EXPECT_EQ(propose_after({5, 6, 7, 8, 9, 7, 1, 2, 5, 6, 7}, 2), (std::vector<int>{8, 9}));
}

TEST(PromptLookup, PrefersTheMostRecentOccurrence) {
  EXPECT_EQ(propose_after({1, 2, 3, 1, 2, 4, 1, 2}, 3), (std::vector<int>{4, 1, 2}));
}

TEST(PromptLookup, StopsAtMaxAndAtTheEndOfTheSequence) {
  EXPECT_EQ(propose_after({1, 2, 3, 4, 5, 1}, 2), (std::vector<int>{2, 3}));
  // The match's continuation runs into the tail itself: only what exists is proposed.
  EXPECT_EQ(propose_after({4, 4}, 5), (std::vector<int>{4}));
}

TEST(PromptLookup, ProposesNothingWithoutAMatch) {
  EXPECT_TRUE(propose_after({1, 2, 3, 4}, 4).empty());
  EXPECT_TRUE(propose_after({7}, 4).empty());
  EXPECT_TRUE(propose_after({}, 4).empty());
}

TEST(PromptLookup, FollowsCommittedTokensAndForgetsOnReset) {
  PromptLookup lookup;
  lookup.reset({});
  lookup.committed(std::vector<int>{10, 11, 12, 13});
  EXPECT_TRUE(lookup.propose(3).empty());
  lookup.committed(std::vector<int>{10, 11});
  EXPECT_EQ(lookup.propose(3).tokens, (std::vector<int>{12, 13, 10}));
  EXPECT_FALSE(lookup.propose(3).probs.has_value());  // point masses
  lookup.reset({});
  lookup.committed(std::vector<int>{11});
  EXPECT_TRUE(lookup.propose(3).empty());
}

TEST(PromptLookup, RejectsBadNgramBounds) {
  EXPECT_THROW(PromptLookup(0, 0), heron::Error);
  EXPECT_THROW(PromptLookup(2, 3), heron::Error);
}
