#pragma once
// The decode loop's text side: token ids -> complete UTF-8 pieces, stop strings cut
// out, and each token's logprobs released with the text it produced (a token whose
// text falls inside a matched stop string is dropped with it).
#include <deque>
#include <string>
#include <vector>

#include "heron/engine/stop_matcher.h"
#include "heron/engine/token_step.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::engine {

struct TokenLogprob {
  struct Alternative {
    int id;
    std::string token;  // the token's raw bytes (may be a partial code point)
    float logprob;
  };
  int id = 0;
  std::string token;
  float logprob = 0;
  std::vector<Alternative> top;
};

struct Piece {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  bool empty() const { return text.empty() && logprobs.empty(); }
};

class Emitter {
 public:
  Emitter(const tokenizer::Tokenizer& tok, std::vector<std::string> stops);
  Piece feed(const TokenStep& step);
  // End of generation (not after a stop match): everything still held.
  Piece finish();
  bool stopped() const { return stop_.matched(); }

 private:
  struct Pending {
    TokenLogprob entry;
    size_t begin, end;  // the token's text in the produced stream
  };
  Piece release(std::string text, bool all);

  const tokenizer::Tokenizer& tok_;
  tokenizer::StreamingDetokenizer detok_;
  StopMatcher stop_;
  std::deque<Pending> pending_;
  size_t produced_ = 0;  // bytes of text decoded so far
  size_t emitted_ = 0;   // bytes of text released so far
};

}  // namespace heron::engine
