#include "heron/engine/emitter.h"

namespace heron::engine {

Emitter::Emitter(const tokenizer::Tokenizer& tok, std::vector<std::string> stops)
    : tok_(tok), detok_(tok), stop_(std::move(stops)) {}

Piece Emitter::feed(const TokenStep& step) {
  std::string text = detok_.feed(step.id);
  if (step.logprob) {
    Pending p{{step.id, tok_.token_bytes(step.id), *step.logprob, {}},
              produced_,
              produced_ + text.size()};
    for (const auto& [id, lp] : step.top) p.entry.top.push_back({id, tok_.token_bytes(id), lp});
    pending_.push_back(std::move(p));
  }
  produced_ += text.size();
  return release(stop_.push(text), false);
}

Piece Emitter::finish() {
  if (stop_.matched()) return {};
  std::string text = stop_.push(detok_.flush());
  if (!stop_.matched()) text += stop_.flush();
  return release(std::move(text), !stop_.matched());
}

Piece Emitter::release(std::string text, bool all) {
  emitted_ += text.size();
  Piece out{std::move(text), {}};
  while (!pending_.empty()) {
    const auto& p = pending_.front();
    // After a stop match, a token that produced any emitted text still counts.
    const bool done = all || p.end <= emitted_ || (stop_.matched() && p.begin < emitted_);
    if (!done) break;
    out.logprobs.push_back(std::move(pending_.front().entry));
    pending_.pop_front();
  }
  if (stop_.matched()) pending_.clear();
  return out;
}

}  // namespace heron::engine
