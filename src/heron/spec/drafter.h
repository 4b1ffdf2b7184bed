#pragma once
// What a drafter is to the speculation engine: it proposes tokens to follow the sequence
// (with the distribution it drew them from, or none for point masses) and hears every
// token the target commits, which is how it keeps its own state level with the target's:
// the prompt as it is prefilled, each plain decode step, each round's accepted run. A
// multi-token-prediction head also hears the target's final hidden states.
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
  // A drafter that reads the target's final hidden states (a multi-token-prediction head)
  // says so; the engine then hands it those of the positions the target ran whose inputs
  // are committed (target_hiddens), each before the tokens they decided are committed.
  virtual bool reads_hiddens() const { return false; }
  // hiddens [1, L, hidden]: positions first .. first + L - 1.
  virtual void target_hiddens(int /*first*/, const mlx::core::array& /*hiddens*/) {}
};

}  // namespace heron::spec
