#pragma once
// Plain pipelined decoding: step n + 1 is dispatched before token n is read, so the host
// builds the next graph while the device computes. Under a grammar only step n + 1's
// forward goes ahead: its draw needs the mask that token n leads to.
#include <optional>

#include "heron/engine/decoder.h"
#include "heron/engine/sequence.h"
#include "heron/sample/sampler.h"

namespace heron::engine {

class PlainDecoder : public Decoder {
 public:
  explicit PlainDecoder(Sequence& sequence) : seq_(sequence) {}
  std::vector<TokenStep> next(int remaining) override;
  // Reads the step in flight, if any, without dispatching another: afterwards the caches
  // hold all tokens but the last. Returns what it read (nothing when none was in flight).
  std::vector<TokenStep> drain();
  bool in_flight() const { return in_flight_.has_value(); }

 private:
  mlx::core::array forward(const mlx::core::array& token);
  sample::Draw draw(const mlx::core::array& logits);  // dispatched, not read
  TokenStep read(sample::Draw& draw);

  Sequence& seq_;
  std::optional<sample::Draw> in_flight_;  // its input is in the caches' pending writes
};

}  // namespace heron::engine
