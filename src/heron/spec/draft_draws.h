#pragma once
// How drafters that run a model draw their proposals: from their own distribution under
// the request's temperature and filters but without its penalties (those belong to the
// target's distribution; q need not follow them), returned with it as q so verification
// stays exact, or as point masses for greedy requests; with a key stream apart from the
// target's (which keys positions by the seed itself), so drafts are independent of the
// verification.
#include <cstdint>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/options.h"
#include "heron/spec/drafter.h"

namespace heron::spec {

class DraftDraws {
 public:
  // A request begins.
  void reset(const sample::SamplingOptions& sampling);
  // The next draw of the current proposal: logits [1, vocab] -> its token, int32 [1], left
  // on the device so the next step can embed it without a host synchronization.
  mlx::core::array draw(const mlx::core::array& logits);
  // Ends the proposal: its tokens (evaluated: one synchronization) and their q.
  Draft finish();

 private:
  sample::SamplingOptions sampling_;
  uint64_t seed_ = 0;
  uint64_t proposals_ = 0;  // each proposal draws with its own keys
  std::vector<mlx::core::array> tokens_, probs_;
};

}  // namespace heron::spec
