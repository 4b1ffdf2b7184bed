#pragma once
// Runs a Grammar over a model's output token by token: which tokens keep the output a
// valid prefix (the mask the sampler applies) and advancing by the chosen one.
//
// The parse state is the set of stacks of a nondeterministic pushdown automaton (as
// llama.cpp's grammar matcher), each stack hash-consed in a pool shared by the copies of a
// Matcher, so a state is a short sorted list of ids. A mask is one walk over the
// vocabulary's byte trie that drops a subtree as soon as no stack survives its prefix;
// masks are memoized per state. A state holds at most 4096 stacks: a byte that would need
// more is refused, so a pathologically ambiguous grammar may dead-end but never lets an
// invalid byte through.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "heron/grammar/grammar.h"
#include "heron/grammar/vocabulary.h"

namespace heron::grammar {

struct TokenMask {
  std::vector<uint8_t> allowed;  // allowed[id] is 0 or 1; size == vocabulary size
};

class MatcherEngine;

// Cheap to copy: a copy shares the grammar, vocabulary, stack pool and mask cache and
// holds only its parse state. Copies may be used from different threads (the shared
// parts are locked).
class Matcher {
 public:
  Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocab);

  // The tokens that keep the output a valid prefix; end ids only when accepting(). The same
  // pointer comes back for the same parse state while it stays in the cache (up to about
  // 64 MiB of masks per Matcher family, then the cache starts over), so callers may key
  // derived device arrays by it.
  std::shared_ptr<const TokenMask> allowed() const;
  // Advances by one token; false (state unchanged) when it is not allowed. An end id is
  // accepted (without changing the state) when accepting().
  bool accept(int32_t id);
  // Advances by raw bytes (any split, partial UTF-8 included); false, state unchanged,
  // when they do not continue a valid prefix.
  bool accept_bytes(std::string_view bytes);
  // The bytes so far form a complete value.
  bool accepting() const;
  // accepting() and no further byte can follow: generation should end here.
  bool complete() const;

 private:
  std::shared_ptr<MatcherEngine> engine_;
  std::vector<uint32_t> state_;  // sorted stack ids; 0 is the empty stack
};

}  // namespace heron::grammar
