#include <gtest/gtest.h>
#include <mlx/mlx.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "heron/core/error.h"
#include "heron/grammar/json_schema.h"
#include "heron/sample/grammar_mask.h"

namespace mx = mlx::core;
using heron::grammar::Matcher;
using heron::grammar::Vocabulary;
using heron::sample::GrammarMask;

namespace {

enum Token { kOpen, kClose, kKeyA, kColon, kOne, kX, kEnd, kVocab };

// A vocabulary of whole JSON pieces and an end token, for an object with one integer "a".
GrammarMask object_with_a(int logits_size) {
  std::vector<std::optional<std::string>> bytes{"{", "}", "\"a\"", ":", "1", "x", std::nullopt};
  auto vocab = std::make_shared<const Vocabulary>(std::move(bytes), std::vector<int32_t>{kEnd});
  auto schema = nlohmann::ordered_json::parse(
      R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],)"
      R"("additionalProperties":false})");
  return {Matcher(heron::grammar::compile_json_schema(schema), vocab), logits_size};
}

std::vector<bool> row(const mx::array& masks, int r) {
  auto one = mx::slice(masks, {r, 0}, {r + 1, masks.shape(1)});
  mx::eval(one);
  std::vector<bool> out;
  out.reserve(static_cast<size_t>(masks.shape(1)));
  for (int i = 0; i < masks.shape(1); ++i) out.push_back(one.data<bool>()[i]);
  return out;
}

}  // namespace

TEST(GrammarMask, ValidPrefixStopsAtTheFirstRefusedTokenAndLeavesTheStateAlone) {
  auto mask = object_with_a(kVocab);
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{kOpen, kKeyA, kColon, kOne, kClose, kEnd}), 6);
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{kOpen, kKeyA, kX, kColon}), 2);
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{kOpen, kClose}), 1);  // "a" is required
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{kClose}), 0);
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{}), 0);
  // Only the look-ahead moved: the sequence itself still starts with '{'.
  EXPECT_EQ(row(mask.allowed(), 0),
            (std::vector<bool>{true, false, false, false, false, false, false}));
}

TEST(GrammarMask, AllowedAlongMasksEachPositionOfADraft) {
  auto mask = object_with_a(kVocab + 2);  // logits wider than the vocabulary: never allowed
  const std::vector<int> draft{kOpen, kKeyA, kColon, kOne};
  auto masks = mask.allowed_along(draft);
  ASSERT_EQ(masks.shape(), (mx::Shape{5, kVocab + 2}));
  const std::vector<std::vector<bool>> want{
      {true, false, false, false, false, false, false, false, false},  // {
      {false, false, true, false, false, false, false, false, false},  // "a"
      {false, false, false, true, false, false, false, false, false},  // :
      {false, false, false, false, true, false, false, false, false},  // 1
      {false, true, false, false, true, false, false, false, false}};  // more digits or }
  for (int r = 0; r < 5; ++r) EXPECT_EQ(row(masks, r), want[static_cast<size_t>(r)]) << r;
  // Each row is what plain decoding sees after accepting the draft so far.
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(row(mask.allowed(), 0), want[static_cast<size_t>(r)]) << r;
    EXPECT_FALSE(mask.accept(draft[static_cast<size_t>(r)]));
  }
  EXPECT_TRUE(mask.accept(kClose));  // the value is whole
  EXPECT_TRUE(mask.complete());
  EXPECT_EQ(row(mask.allowed_along(std::vector<int>{}), 0),
            (std::vector<bool>{false, false, false, false, false, false, true, false, false}));
}

TEST(GrammarMask, AllowedAlongRefusesADraftOutsideTheGrammar) {
  auto mask = object_with_a(kVocab);
  EXPECT_THROW(mask.allowed_along(std::vector<int>{kOpen, kX}), heron::Error);
  EXPECT_EQ(mask.valid_prefix(std::vector<int>{kOpen}), 1);  // the state did not move
}
