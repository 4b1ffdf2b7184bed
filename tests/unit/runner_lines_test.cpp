// The server's reader of runner NDJSON: framing across pieces, shape checks, limits.
#include <gtest/gtest.h>

#include "heron/server/runner_lines.h"

using heron::server::parse_runner_line;
using heron::server::RunnerLineReader;

TEST(RunnerLines, LinesSplitAcrossPieces) {
  RunnerLineReader r;
  EXPECT_TRUE(r.feed("{\"content\": \"he").empty());
  auto lines = r.feed("llo\"}\n\n{\"content\": \"!\"}\n{\"done\": tr");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].value["content"], "hello");
  EXPECT_EQ(lines[1].value["content"], "!");
  EXPECT_FALSE(r.final_seen());
  lines = r.feed("ue, \"eval_count\": 3}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(r.final_seen());
}

TEST(RunnerLines, MalformedOrMisshapenLinesAreBroken) {
  for (const char* text :
       {"{", "[1, 2]", "\"text\"", "{\"content\": 5}", "{\"done\": \"yes\"}",
        "{\"eval_count\": -1}", "{\"prompt_eval_count\": 2000000000}", "{\"logprobs\": [5]}",
        "{\"logprobs\": [{\"bytes\": [256]}]}",
        "{\"logprobs\": [{\"top_logprobs\": [{\"token\": 1}]}]}",
        "{\"error\": {\"status\": 200, \"message\": \"x\"}}",
        "{\"error\": {\"status\": 500, \"message\": 1}}", "{\"error\": 7}", "{\"speculation\": 3}",
        "{\"speculation\": {\"rounds\": -2}}", "{\"speculation\": {\"accepted\": \"all\"}}"}) {
    const auto line = parse_runner_line(text);
    EXPECT_TRUE(line.broken) << text;
    EXPECT_NE(line.why.find("malformed"), std::string::npos) << text;
  }
  EXPECT_FALSE(parse_runner_line("{\"error\": {\"status\": 503, \"message\": \"busy\"}}").broken);
  EXPECT_FALSE(parse_runner_line("{\"error\": \"plain\"}").broken);
  EXPECT_FALSE(
      parse_runner_line("{\"speculation\": {\"rounds\": 2, \"drafted\": 6, \"accepted\": 3}}")
          .broken);
}

TEST(RunnerLines, NothingAfterABrokenLine) {
  RunnerLineReader r;
  auto lines = r.feed("oops\n{\"content\": \"x\"}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].broken);
  EXPECT_TRUE(r.final_seen());
  EXPECT_TRUE(r.feed("{\"content\": \"y\"}\n").empty());
}

TEST(RunnerLines, AnEndlessLineIsCutOff) {
  RunnerLineReader r;
  const std::string chunk(1 << 20, 'a');
  std::vector<heron::server::RunnerLine> lines;
  for (size_t sent = 0; sent <= RunnerLineReader::kMaxLineBytes && lines.empty();
       sent += chunk.size()) {
    lines = r.feed(chunk);
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].broken);
  EXPECT_NE(lines[0].why.find("size limit"), std::string::npos);
}
