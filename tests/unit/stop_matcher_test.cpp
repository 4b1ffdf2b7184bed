// Stop strings across token boundaries, never emitted, split only at code point
// boundaries; the emitter's logprob alignment.
#include <gtest/gtest.h>

#include "heron/engine/emitter.h"
#include "heron/engine/stop_matcher.h"

using heron::engine::Emitter;
using heron::engine::StopMatcher;
using heron::engine::TokenStep;

TEST(StopMatcher, HoldsAPossibleStartThenCutsTheMatch) {
  StopMatcher m({"world"});
  EXPECT_EQ(m.push("Hello wor"), "Hello ");
  EXPECT_FALSE(m.matched());
  EXPECT_EQ(m.push("ld!"), "");
  EXPECT_TRUE(m.matched());
  EXPECT_EQ(m.push("more"), "");  // ignored after a match
}

TEST(StopMatcher, ReleasesWhatStopsMatching) {
  StopMatcher m({"abc"});
  EXPECT_EQ(m.push("xab"), "x");
  EXPECT_EQ(m.push("d"), "abd");
  EXPECT_EQ(m.push("ab"), "");
  EXPECT_EQ(m.flush(), "ab");
}

TEST(StopMatcher, EarliestOfSeveralStops) {
  StopMatcher m({"bc", "ab"});
  EXPECT_EQ(m.push("xabc"), "x");
  EXPECT_TRUE(m.matched());
}

TEST(StopMatcher, MatchInsideOneChunkAndEmptyStopsIgnored) {
  StopMatcher m({"", "END"});
  EXPECT_EQ(m.push("one END two"), "one ");
  EXPECT_TRUE(m.matched());
}

TEST(StopMatcher, SplitsOnlyAtCodePoints) {
  StopMatcher m({"é!"});
  EXPECT_EQ(m.push("café"), "caf");  // "é" (2 bytes) held whole
  EXPECT_EQ(m.push("?"), "é?");
}

TEST(StopMatcher, NoStopsPassesEverything) {
  StopMatcher m({});
  EXPECT_EQ(m.push("abc"), "abc");
  EXPECT_EQ(m.flush(), "");
}

namespace {

std::unique_ptr<heron::tokenizer::Tokenizer> tiny_tokenizer() {
  return heron::tokenizer::Tokenizer::from_hf_dir(HERON_FIXTURES "/models/tiny-llama");
}

}  // namespace

TEST(Emitter, WithoutStopsEverythingComesOutWithItsLogprobs) {
  auto tok = tiny_tokenizer();
  auto ids = tok->encode("hello world, how are you", false, false);
  Emitter e(*tok, {});
  std::string text;
  size_t entries = 0;
  for (int id : ids) {
    auto p = e.feed(TokenStep{id, -1.0f, {{id, -1.0f}}});
    text += p.text;
    entries += p.logprobs.size();
  }
  auto last = e.finish();
  text += last.text;
  entries += last.logprobs.size();
  EXPECT_EQ(text, tok->decode(ids));
  EXPECT_EQ(entries, ids.size());
}

TEST(Emitter, StopAcrossTokensDropsTheStopAndItsTokens) {
  auto tok = tiny_tokenizer();
  auto ids = tok->encode("hello world stop here and more", false, false);
  Emitter e(*tok, {"stop here"});
  std::string text, token_text;
  size_t fed = 0;
  for (int id : ids) {
    ++fed;
    auto p = e.feed(TokenStep{id, -0.5f, {}});
    text += p.text;
    for (const auto& lp : p.logprobs) token_text += lp.token;
    if (e.stopped()) break;
  }
  EXPECT_TRUE(e.stopped());
  EXPECT_EQ(text, "hello world ");
  EXPECT_TRUE(e.finish().empty());
  // Every released token produced emitted text; tokens inside the stop string were dropped.
  EXPECT_EQ(token_text.rfind("hello world", 0), 0u);
  EXPECT_LT(token_text.size(), std::string("hello world stop here").size());
  EXPECT_LT(fed, ids.size());
}
