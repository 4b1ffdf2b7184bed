#pragma once
// A grammar's constraint as the sampler takes it: the matcher's allowed tokens as a
// device mask over the model's logits. Masks are memoized per parse state by the
// matcher, so each distinct one crosses to the device once per request.
#include <map>
#include <memory>

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
  // Advances past a drawn token; throws heron::Error when the mask did not allow it.
  void accept(int id);
  // The value is whole and nothing may follow: generation ends.
  bool complete() const { return matcher_.complete(); }

 private:
  grammar::Matcher matcher_;
  int logits_size_;
  // Keyed by the matcher's memoized mask, which the entry keeps alive.
  std::map<const grammar::TokenMask*,
           std::pair<std::shared_ptr<const grammar::TokenMask>, mlx::core::array>>
      arrays_;
};

}  // namespace heron::sample
