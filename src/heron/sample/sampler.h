#pragma once
// Turns logits into the next token on the device, without a host round trip, so the
// decode loop can dispatch step n+1 before it reads token n. The filters are filter.h's;
// generated position i draws with its own key, so a speculative round that verifies
// position i draws the same token the plain sampler would have.
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
  // logits [1, V] (any float type). The drawn token joins the penalty history. `allowed`
  // (bool [1, V]): the only tokens that may be drawn (a grammar's mask); the filters then
  // work on what it leaves, and logprobs still describe the model's own distribution.
  Draw sample(const mlx::core::array& logits,
              const std::optional<mlx::core::array>& allowed = std::nullopt);
  mlx::core::array operator()(const mlx::core::array& logits) { return sample(logits).token; }

  // The generated position the next draw is for (after a speculative round drew some).
  void set_position(uint64_t position) { position_ = position; }
  uint64_t position() const { return position_; }
  uint64_t seed() const { return seed_; }
  // int32 [1, n]: the penalty window, when the penalties are on and it holds a token.
  const std::optional<mlx::core::array>& penalty_window() const { return history_; }
  // A draw made for this sampler elsewhere (a batch's, slot_sampler.h): token int32 [1]
  // was drawn for position() with its key; it joins the history and the position moves on.
  void drew(const mlx::core::array& token);
  const SamplingOptions& options() const { return options_; }
  const LogprobOptions& logprob_options() const { return logprob_options_; }

 private:
  void remember(const mlx::core::array& token);

  SamplingOptions options_;
  LogprobOptions logprob_options_;
  uint64_t seed_;
  uint64_t position_ = 0;                    // of the next draw
  std::optional<mlx::core::array> history_;  // int32 [1, n]: the penalty window
};

}  // namespace heron::sample
