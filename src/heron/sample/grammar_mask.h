#pragma once
// A grammar's constraint as the sampler takes it: the matcher's allowed tokens as a
// device mask over the model's logits. Masks are memoized per parse state by the
// matcher, so each distinct one crosses to the device once per request.
#include <map>
#include <memory>
#include <span>

#include <mlx/array.h>

#include "heron/grammar/matcher.h"

namespace heron::sample {

class GrammarMask {
 public:
  // logits_size: the model's logits width (its embedding table may be larger than the
  // vocabulary; ids beyond the vocabulary are never allowed).
  GrammarMask(grammar::Matcher matcher, int logits_size);
  // bool [1, logits_size] for the next token.
  const mlx::core::array& allowed();
  // How many of `tokens` (say, a speculative draft) keep the output valid, in order.
  int valid_prefix(std::span<const int> tokens) const;
  // bool [n + 1, logits_size]: row i is the mask after the first i of `tokens` (n of them,
  // a valid_prefix), so one target forward over a draft is masked as plain decoding would.
  mlx::core::array allowed_along(std::span<const int> tokens);
  // Advances past a drawn token; throws heron::Error when the mask did not allow it.
  // Returns complete(): a decoder may run ahead of the decode loop, so each token says
  // whether it was the one that completed the value.
  bool accept(int id);
  // The value is whole and nothing may follow: generation ends.
  bool complete() const { return matcher_.complete(); }

 private:
  const mlx::core::array& device_mask(const std::shared_ptr<const grammar::TokenMask>& mask);

  grammar::Matcher matcher_;
  int logits_size_;
  // Keyed by the matcher's memoized mask, which the entry keeps alive.
  std::map<const grammar::TokenMask*,
           std::pair<std::shared_ptr<const grammar::TokenMask>, mlx::core::array>>
      arrays_;
};

}  // namespace heron::sample
