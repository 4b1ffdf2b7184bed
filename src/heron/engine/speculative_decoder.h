#pragma once
// Speculative decoding: each round, the depth controller picks a depth, the drafter
// proposes up to that many tokens, and one target forward over the last token plus the
// drafts verifies them (sample/verify.h); the caches rewind to what was accepted. With
// depth 0 or no proposal, the plain decoder steps instead. Every committed token is
// reported to the drafter, whichever decoder committed it. One host synchronization per
// round.
#include <chrono>
#include <optional>

#include "heron/engine/plain_decoder.h"
#include "heron/engine/sequence.h"
#include "heron/spec/depth_controller.h"
#include "heron/spec/drafter.h"

namespace heron::engine {

struct SpeculationStats {
  int rounds = 0;    // target forwards that verified drafts
  int drafted = 0;   // tokens proposed in them
  int accepted = 0;  // of which the target accepted
};

class SpeculativeDecoder : public Decoder {
 public:
  SpeculativeDecoder(Sequence& sequence, PlainDecoder& plain, spec::Drafter& drafter,
                     spec::DepthController& controller);
  std::vector<TokenStep> next(int remaining) override;
  const SpeculationStats& stats() const { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<TokenStep> round(spec::Draft draft, double draft_seconds);
  std::vector<TokenStep> plain_step(int remaining);
  void committed(const std::vector<TokenStep>& steps);

  Sequence& seq_;
  PlainDecoder& plain_;
  spec::Drafter& drafter_;
  spec::DepthController& controller_;
  SpeculationStats stats_;
  // A proposal made while a plain step was in flight, for the call after it was read.
  std::optional<spec::Draft> stashed_;
  double stashed_seconds_ = 0;
  std::optional<Clock::time_point> last_plain_;  // when the last pipelined step returned
};

}  // namespace heron::engine
