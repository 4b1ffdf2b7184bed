#pragma once
// The decode phase behind one interface: the decode loop asks a decoder for the next
// committed tokens and is the only place that emits them and enforces the budget, EOS
// and stop strings. The plain pipelined decoder is one decoder, the speculative one
// another.
#include <vector>

#include "heron/engine/token_step.h"

namespace heron::engine {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Between 1 and `remaining` (>= 1) tokens the target committed next, in order. They
  // have joined the sequence.
  virtual std::vector<TokenStep> next(int remaining) = 0;
};

}  // namespace heron::engine
