#pragma once
// Turns logits into the next token on the device, without a host round trip, so the
// decode loop can dispatch step n+1 before it reads token n.
// Order (DESIGN.md "Sampling"): penalties -> (temperature 0: argmax) -> top-k ->
// softmax(x/T) in fp32 -> top-p -> min-p -> renormalize -> draw.
#include <cstdint>
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/logprobs.h"
#include "heron/sample/options.h"

namespace heron::sample {

struct Draw {
  mlx::core::array token;                 // int32 [1]
  std::optional<TokenLogprobs> logprobs;  // when LogprobOptions::enabled
};

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options, const LogprobOptions& logprobs = {});
  // The context so far (the prompt): the penalties look at it. Call before sampling.
  void set_history(const std::vector<int>& tokens);
  // logits [1, V] (any float type). The drawn token joins the penalty history.
  Draw sample(const mlx::core::array& logits);
  mlx::core::array operator()(const mlx::core::array& logits) { return sample(logits).token; }

 private:
  mlx::core::array draw(mlx::core::array logits);
  void remember(const mlx::core::array& token);

  SamplingOptions options_;
  LogprobOptions logprob_options_;
  uint64_t seed_;
  uint64_t step_ = 0;                        // each draw gets its own key derived from (seed, step)
  std::optional<mlx::core::array> history_;  // int32 [1, n]: the penalty window
};

}  // namespace heron::sample
