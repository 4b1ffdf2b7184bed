#include "heron/engine/plain_decoder.h"

#include <mlx/transforms.h>

#include "heron/engine/token_read.h"

namespace heron::engine {

namespace mx = mlx::core;

sample::Draw PlainDecoder::dispatch_step(const mx::array& token) {
  auto logits =
      seq_.model.forward(model::Batch::single(token, seq_.offset()), seq_.cache.caches()).logits;
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
  if (seq_.grammar) seq_.grammar->accept(t.id);
  return t;
}

std::vector<TokenStep> PlainDecoder::next(int remaining) {
  if (!in_flight_) {
    in_flight_ = dispatch_step(mx::array({seq_.tokens.back()}));
    seq_.cache.append(std::span(&seq_.tokens.back(), 1));
  }
  auto current = std::move(*in_flight_);
  in_flight_.reset();
  // A grammar's next mask depends on this token: no step goes ahead of the read.
  if (remaining > 1 && !seq_.grammar) in_flight_ = dispatch_step(current.token);
  const TokenStep t = read(current);
  if (in_flight_) seq_.cache.append(std::span(&t.id, 1));  // the caches now hold it
  return {t};
}

std::vector<TokenStep> PlainDecoder::drain() {
  if (!in_flight_) return {};
  auto current = std::move(*in_flight_);
  in_flight_.reset();
  return {read(current)};
}

}  // namespace heron::engine
