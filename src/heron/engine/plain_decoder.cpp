#include "heron/engine/plain_decoder.h"

#include <mlx/transforms.h>

#include "heron/engine/token_read.h"

namespace heron::engine {

namespace mx = mlx::core;

mx::array PlainDecoder::forward(const mx::array& token) {
  const int offset = seq_.offset();
  auto out = seq_.model.forward(model::Batch::single(token, offset), seq_.cache.caches(),
                                seq_.hidden_reader != nullptr);
  if (seq_.hidden_reader) seq_.hidden_reader->target_hiddens(offset, *out.hiddens);
  return out.logits;
}

sample::Draw PlainDecoder::draw(const mx::array& logits) {
  auto draw = seq_.grammar ? seq_.sampler.sample(logits, seq_.grammar->allowed())
                           : seq_.sampler.sample(logits);
  std::vector<mx::array> outs{draw.token};
  if (draw.logprobs) append_logprob_arrays(*draw.logprobs, outs);
  mx::async_eval(outs);
  return draw;
}

TokenStep PlainDecoder::read(sample::Draw& draw) {
  TokenStep t = TokenRows(draw.token, draw.logprobs)[0];
  seq_.tokens.push_back(t.id);
  if (seq_.grammar) t.completes = seq_.grammar->accept(t.id);
  return t;
}

std::vector<TokenStep> PlainDecoder::next(int remaining) {
  if (!in_flight_) {
    in_flight_ = draw(forward(mx::array({seq_.tokens.back()})));
    seq_.cache.append(std::span(&seq_.tokens.back(), 1));
  }
  auto current = std::move(*in_flight_);
  in_flight_.reset();
  if (remaining <= 1) return {read(current)};
  TokenStep t;
  if (seq_.grammar) {
    // The next mask needs this token, so only the forward goes ahead of the read: the
    // device computes it while the host reads the token and walks the grammar.
    auto logits = forward(current.token);
    mx::async_eval(logits);
    t = read(current);
    in_flight_ = draw(logits);
  } else {
    in_flight_ = draw(forward(current.token));
    t = read(current);
  }
  seq_.cache.append(std::span(&t.id, 1));  // the step in flight read it into the caches
  return {t};
}

std::vector<TokenStep> PlainDecoder::drain() {
  if (!in_flight_) return {};
  auto current = std::move(*in_flight_);
  in_flight_.reset();
  return {read(current)};
}

}  // namespace heron::engine
