// Tokenizer behaviour beyond the reference corpora: malformed tokenizer.json, the UTF-8
// rules, streaming detokenization, the regex translation and thread safety.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "heron/core/error.h"
#include "heron/tokenizer/regex.h"
#include "heron/tokenizer/tokenizer.h"
#include "heron/tokenizer/utf8.h"
#include "tokenizer_test_util.h"

using heron::tokenizer::StreamingDetokenizer;
using heron::tokenizer::Tokenizer;
using nlohmann::json;
using namespace tokenizer_test;

// ---------------------------------------------------------------- malformed tokenizer.json

namespace {

// A tiny valid byte-level BPE: 256 byte tokens, merges for "he", "ll", "hell", "hello".
json tiny_tokenizer() {
  json vocab = json::object();
  const auto spelled = [](int b) {
    auto printable = [](int x) {
      return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF);
    };
    int n = 256;
    for (int x = 0; x < b; ++x)
      if (!printable(x)) ++n;
    std::string s;
    heron::tokenizer::utf8::append(
        s, printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(n));
    return s;
  };
  for (int b = 0; b < 256; ++b) vocab[spelled(b)] = b;
  vocab["he"] = 256;
  vocab["ll"] = 257;
  vocab["hell"] = 258;
  vocab["hello"] = 259;
  return {{"version", "1.0"},
          {"added_tokens", json::array({{{"id", 260}, {"content", "<eos>"}, {"special", true}}})},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"vocab", vocab},
            {"merges", json::array({"h e", json::array({"l", "l"}), "he ll", "hell o"})}}}};
}

void expect_json_error(const json& tj, const std::string& needle) {
  try {
    Tokenizer::from_json(tj, json());
    ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
  } catch (const heron::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(TokenizerMalformed, TinyTokenizerWorks) {
  const auto tok = Tokenizer::from_json(tiny_tokenizer(), json());
  EXPECT_EQ(tok->encode("hello"), (std::vector<int32_t>{259}));
  EXPECT_EQ(tok->encode("hello<eos>"), (std::vector<int32_t>{259, 260}));
  EXPECT_EQ(tok->encode("hello<eos>", true, false).size(), 6u);
  EXPECT_EQ(tok->decode(std::vector<int32_t>{259, 260}), "hello<eos>");
  EXPECT_EQ(tok->decode(std::vector<int32_t>{259, 260}, true), "hello");
  EXPECT_EQ(tok->vocab_size(), 261);
}

TEST(TokenizerMalformed, Errors) {
  json t = tiny_tokenizer();
  t.erase("model");
  expect_json_error(t, "'model' is missing");

  t = tiny_tokenizer();
  t["model"]["vocab"] = json::array({1, 2});
  expect_json_error(t, "'vocab' must be an object");

  t = tiny_tokenizer();
  t["model"]["vocab"]["he"] = "256";
  expect_json_error(t, "must be an integer");

  t = tiny_tokenizer();
  t["model"]["merges"].push_back("he zz");
  expect_json_error(t, "'zz'");

  t = tiny_tokenizer();
  t["model"]["merges"].push_back(json::array({"h", 3}));
  expect_json_error(t, "merge");

  t = tiny_tokenizer();
  t["model"]["merges"].push_back("nospace");
  expect_json_error(t, "nospace");

  t = tiny_tokenizer();
  t["model"]["type"] = "WordLevel";
  expect_json_error(t, "WordLevel");

  t = tiny_tokenizer();
  t["model"] = {{"type", "Unigram"}, {"vocab", json::array({json::array({"a", "x"})})}};
  expect_json_error(t, "[token, score]");

  t = tiny_tokenizer();
  t["model"] = {
      {"type", "Unigram"}, {"unk_id", 3}, {"vocab", json::array({json::array({"a", 0})})}};
  expect_json_error(t, "unk_id");

  t = tiny_tokenizer();
  t["model"]["unk_token"] = "<nope>";
  expect_json_error(t, "<nope>");

  t = tiny_tokenizer();
  t["model"]["vocab"]["dup"] = 256;  // two tokens, one id
  expect_json_error(t, "256");

  t = tiny_tokenizer();
  t["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array(
           {{{"type", "Split"}, {"pattern", {{"Regex", "(unclosed[a-"}}}, {"behavior", "Isolated"}},
            {{"type", "ByteLevel"}}})}};
  expect_json_error(t, "does not compile");

  t = tiny_tokenizer();
  t["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "x"}}}, {"behavior", "Sideways"}};
  expect_json_error(t, "Sideways");

  t = tiny_tokenizer();
  t["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  expect_json_error(t, "not supported yet");

  t = tiny_tokenizer();
  t["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "ab"}};
  expect_json_error(t, "one character");

  t = tiny_tokenizer();
  t["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  expect_json_error(t, "Precompiled");

  t = tiny_tokenizer();
  t["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", ""}}}, {"content", "x"}};
  expect_json_error(t, "empty pattern");

  t = tiny_tokenizer();
  t["decoder"] = {{"type", "CTC"}};
  expect_json_error(t, "CTC");

  t = tiny_tokenizer();
  t["decoder"] = {{"type", "Strip"}, {"content", " "}, {"start", -1}};
  expect_json_error(t, "start");

  // Deep nesting is refused rather than recursed into.
  json deep = {{"type", "Lowercase"}};
  for (int i = 0; i < 100; ++i) deep = {{"type", "Sequence"}, {"normalizers", json::array({deep})}};
  t = tiny_tokenizer();
  t["normalizer"] = deep;
  expect_json_error(t, "nested too deeply");

  t = tiny_tokenizer();
  t["added_tokens"][0]["id"] = "260";
  expect_json_error(t, "must be an integer");

  // Duplicate added tokens: HF renumbers or drops them quietly; heron refuses.
  t = tiny_tokenizer();
  t["added_tokens"].push_back({{"id", 260}, {"content", "<dup>"}, {"special", true}});
  expect_json_error(t, "added tokens '<eos>' and '<dup>' both have id 260");
  t = tiny_tokenizer();
  t["added_tokens"].push_back({{"id", 261}, {"content", "<eos>"}, {"special", true}});
  expect_json_error(t, "added token '<eos>' is listed twice (ids 260 and 261)");
  t = tiny_tokenizer();
  t["added_tokens"].push_back(t["added_tokens"][0]);  // the same entry twice is one token
  EXPECT_EQ(Tokenizer::from_json(t, json())->encode("hello<eos>"),
            (std::vector<int32_t>{259, 260}));

  t = tiny_tokenizer();
  t["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", json::array({{{"SpecialToken", {{"id", "<s>"}}}}})},
                         {"special_tokens", json::object()}};
  expect_json_error(t, "<s>");

  t = tiny_tokenizer();
  t["model"]["byte_fallback"] = "yes";
  expect_json_error(t, "byte_fallback");

  expect_json_error(json::array(), "JSON object");

  // Through a file, the big model parts are read without a tree: same checks there.
  auto expect_file_error = [](const json& tj, const std::string& needle) {
    const fs::path path = temp_dir() / "malformed.json";
    std::ofstream(path) << tj.dump();
    try {
      Tokenizer::from_json_files(path, std::nullopt);
      ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
    } catch (const heron::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    const fs::path path = temp_dir() / "tiny.json";
    std::ofstream(path) << tiny_tokenizer().dump();
    EXPECT_EQ(Tokenizer::from_json_files(path, std::nullopt)->encode("hello"),
              (std::vector<int32_t>{259}));
  }
  t = tiny_tokenizer();
  t["model"]["vocab"]["he"] = "256";
  expect_file_error(t, "must be an integer");
  t = tiny_tokenizer();
  t["model"]["vocab"]["he"] = json::array({256});
  expect_file_error(t, "must be an integer");
  t = tiny_tokenizer();
  t["model"]["merges"].push_back("a b c");
  expect_file_error(t, "'a b c'");
  t = tiny_tokenizer();
  t["model"]["merges"].push_back(json::array({"h", "e", "l"}));
  expect_file_error(t, "merge");
  t = tiny_tokenizer();
  t["model"]["merges"].push_back("he zz");
  expect_file_error(t, "'zz'");
  t = tiny_tokenizer();
  t["added_tokens"].push_back({{"id", 260}, {"content", "<dup>"}, {"special", true}});
  expect_file_error(t, "both have id 260");
  {
    // 100,000 nested arrays: an error, not a stack overflow.
    const fs::path path = temp_dir() / "deep.json";
    std::ofstream(path) << "{\"normalizer\": " << std::string(100000, '[')
                        << std::string(100000, ']') << ", \"model\": {}}";
    EXPECT_THROW(Tokenizer::from_json_files(path, std::nullopt), heron::Error);
  }

  const fs::path bad = temp_dir() / "bad.json";
  std::ofstream(bad) << "{\"model\": ";
  EXPECT_THROW(Tokenizer::from_json_files(bad, std::nullopt), heron::Error);
  EXPECT_THROW(Tokenizer::from_hf_dir(temp_dir() / "nope"), heron::Error);
}

// ------------------------------------------------------------------------- UTF-8 rules

TEST(TokenizerUtf8, SanitizeReplacesMaximalSubparts) {
  using heron::tokenizer::utf8::sanitize;
  EXPECT_EQ(sanitize("a\xff"
                     "b"),
            "a\uFFFDb");
  EXPECT_EQ(sanitize("x\xe2\x82y"), "x\uFFFDy");              // one U+FFFD for a truncated sequence
  EXPECT_EQ(sanitize("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");  // surrogate: each byte
  EXPECT_EQ(sanitize("\xc0\xaf"), "\uFFFD\uFFFD");            // overlong
  EXPECT_EQ(sanitize("\xf0\x9f\x98"), "\uFFFD");
  EXPECT_EQ(sanitize("ok \xf0\x9f\x98\x80"), "ok \xf0\x9f\x98\x80");
}

TEST(TokenizerUtf8, CompletePrefix) {
  using heron::tokenizer::utf8::complete_prefix;
  EXPECT_EQ(complete_prefix("abc"), 3u);
  EXPECT_EQ(complete_prefix("ab\xe2\x82"), 2u);
  EXPECT_EQ(complete_prefix("ab\xf0"), 2u);
  EXPECT_EQ(complete_prefix("ab\xff"), 3u);        // invalid, not incomplete: emit it
  EXPECT_EQ(complete_prefix("ab\xe2\x28"), 4u);    // broken already
  EXPECT_EQ(complete_prefix("\xe2\x82\xac"), 3u);  // complete euro sign
}

TEST(TokenizerUtf8, InvalidInputEncodesAsReplacement) {
  const Tokenizer& tok = tokenizer("qwen3");
  EXPECT_EQ(tok.encode("a\xff"
                       "b"),
            tok.encode("a\uFFFDb"));
  EXPECT_EQ(tok.encode("<|im_start|>\xc3"), tok.encode("<|im_start|>\uFFFD"));
}

TEST(TokenizerStreaming, RandomIdsMatchDecode) {
  // Random ids (many partial UTF-8 byte tokens among them): the streamed text is always
  // valid UTF-8 and concatenates to decode().
  for (const std::string name : {"qwen3", "smollm2"}) {
    const Tokenizer& tok = tokenizer(name);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int32_t> any(0, tok.vocab_size() - 1), low(0, 300);
    for (int round = 0; round < 200; ++round) {
      std::vector<int32_t> ids(static_cast<size_t>(1 + round % 30));
      for (auto& id : ids) id = rng() % 2 ? any(rng) : low(rng);
      StreamingDetokenizer stream(tok);
      std::string streamed;
      for (int32_t id : ids) {
        const std::string piece = stream.feed(id);
        EXPECT_TRUE(heron::tokenizer::utf8::is_valid(piece));
        streamed += piece;
      }
      streamed += stream.flush();
      EXPECT_EQ(streamed, tok.decode(ids)) << name << " round " << round;
    }
  }
}

TEST(TokenizerStreaming, HoldsBackSplitCodePoint) {
  const Tokenizer& tok = tokenizer("qwen3");
  // A rare code point the vocab spells with several byte tokens.
  const std::string text = "\U00012000";
  const auto ids = tok.encode(text);
  ASSERT_GT(ids.size(), 1u);
  StreamingDetokenizer stream(tok);
  std::string out;
  for (size_t i = 0; i + 1 < ids.size(); ++i) EXPECT_EQ(stream.feed(ids[i]), "");
  EXPECT_EQ(stream.feed(ids.back()), text);
  EXPECT_EQ(stream.flush(), "");
  StreamingDetokenizer cut(tok);
  EXPECT_EQ(cut.feed(ids[0]), "");
  EXPECT_EQ(cut.flush(), "\uFFFD");
}

TEST(TokenizerRegex, OnigurumaWhitespaceMeaning) {
  using heron::tokenizer::Regex;
  using heron::tokenizer::Span;
  const Regex ws = Regex::pattern("\\s+");
  std::vector<Span> m;
  ws.find_all(
      "a\xc2\x85"
      "b\xe1\xa0\x8e"
      "c",
      m);  // U+0085 is \s, U+180E is not
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].begin, 1u);
  EXPECT_EQ(m[0].end, 3u);
  EXPECT_THROW(Regex::pattern("[\\S]"), heron::Error);
  EXPECT_THROW(Regex::pattern("(?<"), heron::Error);
}

TEST(TokenizerThreads, ConcurrentEncodeIsConsistent) {
  const Tokenizer& tok = tokenizer("llama3");
  const auto& strings = corpus().strings;
  std::vector<std::vector<int32_t>> want;
  for (size_t i = 0; i < 400; ++i) want.push_back(tok.encode(strings[i]));
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < 400; ++i) {
        const size_t k = (i * 7 + static_cast<size_t>(t) * 13) % 400;
        if (tok.encode(strings[k]) != want[k]) ++bad[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}

// --------------------------------------------------------- decoders fed one id at a time

namespace {

int32_t id_of(const Tokenizer& tok, const std::string& token) {
  const auto id = tok.token_to_id(token);
  if (!id) throw std::runtime_error("no token " + token);
  return *id;
}

}  // namespace

TEST(TokenizerStreaming, SentencePieceByteRunsAndLeadingSpace) {
  const Tokenizer& tok = tokenizer("llama2");
  StreamingDetokenizer stream(tok);
  // The decoder strips the first token's leading space.
  EXPECT_EQ(stream.feed(id_of(tok, "▁Hello")), "Hello");
  EXPECT_EQ(stream.feed(id_of(tok, "▁world")), " world");
  // A run of byte tokens is held while it is valid UTF-8 (HF decodes the run as a whole)...
  for (const char* b : {"<0xF0>", "<0x9F>", "<0xAB>", "<0xA0>"})
    EXPECT_EQ(stream.feed(id_of(tok, b)), "");
  EXPECT_EQ(stream.feed(id_of(tok, "▁x")), "\U0001FAE0 x");
  // ...and replaced, one U+FFFD per byte token, as soon as it cannot be.
  EXPECT_EQ(stream.feed(id_of(tok, "<0xE2>")), "");
  EXPECT_EQ(stream.feed(id_of(tok, "<0x41>")), "\uFFFD\uFFFD");
  EXPECT_EQ(stream.feed(id_of(tok, "<0x42>")), "\uFFFD");
  EXPECT_EQ(stream.feed(id_of(tok, "<0xE2>")), "\uFFFD");
  EXPECT_EQ(stream.flush(), "");
  // After flush a new sequence starts: its leading space goes again.
  EXPECT_EQ(stream.feed(id_of(tok, "▁again")), "again");
  EXPECT_EQ(stream.flush(), "");

  StreamingDetokenizer cut(tok);
  EXPECT_EQ(cut.feed(id_of(tok, "<0xE2>")), "");
  EXPECT_EQ(cut.flush(), "\uFFFD");  // an unfinished run, as decode() gives it
}

TEST(TokenizerStreaming, WordPieceAndSkipSpecial) {
  const Tokenizer& tok = tokenizer("bert");
  StreamingDetokenizer stream(tok, /*skip_special=*/true);
  EXPECT_EQ(stream.feed(id_of(tok, "[CLS]")), "");
  EXPECT_EQ(stream.feed(id_of(tok, "play")), "play");
  EXPECT_EQ(stream.feed(id_of(tok, "##ing")), "ing");
  EXPECT_EQ(stream.feed(id_of(tok, "games")), " games");
  EXPECT_EQ(stream.feed(id_of(tok, ".")), ".");  // cleanup glues punctuation
  EXPECT_EQ(stream.flush(), "");
}

TEST(TokenizerStreaming, BpeSuffixWaitsForTheNextToken) {
  const Tokenizer& tok = tokenizer("bpe_suffix");
  const auto ids = tok.encode("hello world", false);
  ASSERT_GE(ids.size(), 2u);
  StreamingDetokenizer stream(tok);
  std::string out = stream.feed(ids[0]);
  EXPECT_EQ(out, "");  // its end-of-word suffix becomes " " or "" depending on what follows
  for (size_t i = 1; i < ids.size(); ++i) out += stream.feed(ids[i]);
  out += stream.flush();
  EXPECT_EQ(out, tok.decode(ids));
  EXPECT_EQ(out, "hello world");
}

TEST(TokenizerTokenBytes, EachFamily) {
  const Tokenizer& sp = tokenizer("llama2");
  EXPECT_EQ(sp.token_bytes(id_of(sp, "▁Hello")), " Hello");
  EXPECT_EQ(sp.token_bytes(id_of(sp, "<0xE2>")), "\xE2");
  EXPECT_EQ(*sp.id_to_token(id_of(sp, "<0x0A>")), "<0x0A>");
  const Tokenizer& bert = tokenizer("bert");
  EXPECT_EQ(bert.token_bytes(id_of(bert, "##ing")), "ing");
  EXPECT_EQ(bert.token_bytes(id_of(bert, "play")), " play");
  const Tokenizer& bl = tokenizer("qwen3");
  EXPECT_EQ(bl.token_bytes(id_of(bl, "Ġhello")), " hello");
  EXPECT_EQ(bl.token_bytes(id_of(bl, "<|im_end|>")), "<|im_end|>");
  EXPECT_EQ(bl.id_to_token(-1), nullptr);
}
