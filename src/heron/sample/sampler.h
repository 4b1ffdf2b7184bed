#pragma once
// Turns logits into the next token on the device, without a host round trip, so the
// decode loop can dispatch step n+1 before it reads token n.
// Order: (temperature 0: argmax) -> top-k -> softmax(x/T) -> top-p -> draw.
#include <cstdint>

#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::sample {

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);
  // logits [1, V] (any float type) -> int32 [1]
  mlx::core::array operator()(const mlx::core::array& logits);

 private:
  SamplingOptions options_;
  uint64_t seed_;
  uint64_t step_ = 0;  // each draw gets its own key derived from (seed, step)
};

}  // namespace heron::sample
