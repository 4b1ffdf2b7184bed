#pragma once
// What a drafter is to the speculation engine: it proposes tokens to follow the sequence
// (with the distribution it drew them from, or none for point masses) and hears every
// token the target commits, which is how it keeps its own state level with the target's:
// the prompt as it is prefilled, each plain decode step, each round's accepted run.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::spec {

struct Draft {
  std::vector<int> tokens;
  std::optional<mlx::core::array> probs;  // float32 [N, V]: q for each token; none: point masses
  bool empty() const { return tokens.empty(); }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // A new sequence begins, sampled with these options; committed() reports it from its
  // first token.
  virtual void reset(const sample::SamplingOptions& sampling) = 0;
  // The sequence grew by these tokens.
  virtual void committed(std::span<const int> tokens) = 0;
  // At most `max` (>= 1) tokens to follow the sequence; none when nothing is worth verifying.
  virtual Draft propose(int max) = 0;
};

}  // namespace heron::spec
