#pragma once
// One sequence as its decoders share it: the model, the prefix cache whose live caches
// hold the sequence, the sampler, and every token so far (prompt and committed output).
// Between decoder calls the caches hold all tokens but the last, which seeds the next
// forward, unless the plain decoder has a step in flight. A grammar, when the output
// has one, sees every committed token and masks every draw.
#include <vector>

#include "heron/cache/prefix_cache.h"
#include "heron/model/model.h"
#include "heron/sample/grammar_mask.h"
#include "heron/sample/sampler.h"
#include "heron/spec/drafter.h"

namespace heron::engine {

struct Sequence {
  const model::Model& model;
  cache::PrefixCache& cache;
  sample::Sampler& sampler;
  std::vector<int> tokens;
  sample::GrammarMask* grammar = nullptr;
  // A drafter that reads the target's hidden states hears those of each forward.
  spec::Drafter* hidden_reader = nullptr;

  int offset() const { return cache.caches()[0]->offset(); }
};

}  // namespace heron::engine
