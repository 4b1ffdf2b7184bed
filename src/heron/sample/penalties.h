#pragma once
// Repetition penalties over the recent token window, as device ops so the decode loop
// never waits on the host: repeat_penalty (CTRL: divide positive logits, multiply
// negative ones), then presence (once per seen token) and frequency (per occurrence).
#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::sample {

// logits float32 [1, V]; window int32 [1, n] of recent token ids (n > 0).
mlx::core::array apply_penalties(const mlx::core::array& logits, const mlx::core::array& window,
                                 const SamplingOptions& options);

}  // namespace heron::sample
