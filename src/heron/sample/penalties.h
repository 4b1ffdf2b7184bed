#pragma once
// Repetition penalties over the recent token window, as device ops so the decode loop
// never waits on the host: repeat_penalty (CTRL: divide positive logits, multiply
// negative ones), then presence (once per seen token) and frequency (per occurrence).
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/options.h"

namespace heron::sample {

// logits float32 [R, V]; window int32 [R, n] of each row's recent token ids, where the
// id V pads a row whose history is shorter than n.
mlx::core::array apply_penalties(const mlx::core::array& logits, const mlx::core::array& window,
                                 const SamplingOptions& options);

// The penalty windows of rows that extend `history` by 0, 1, ..., rows - 1 tokens of
// `extension` (speculative verification: row i has seen the first i drafts), padded
// with `vocab`. Empty when the penalties are off or no row has a history.
std::optional<mlx::core::array> penalty_windows(const std::vector<int>& history,
                                                const std::vector<int>& extension, int rows,
                                                const SamplingOptions& options, int vocab);

}  // namespace heron::sample
