#pragma once
// Speculative verification (Leviathan et al. 2023, Chen et al. 2023) on the device: which
// drafts the target accepts, and the token that follows them, for B independent rounds
// at once. Round b verifies drafts[b] against target rows b * (N + 1) .. b * (N + 1) + N,
// row i being the position draft i was proposed for, drawn with that position's key.
// With draft distributions q, draft i is accepted with probability min(1, p/q) and a
// rejection draws from norm(max(p - q, 0)). Point-mass drafts (no q) are accepted when
// the target's own draw for that position equals them, which is the same rule with q a
// point mass, and draws exactly what plain decoding with the same seed draws. After a
// full acceptance the last row gives the bonus token. Temperature 0 is the same path
// with point-mass targets.
#include <optional>

#include <mlx/array.h>

#include "heron/sample/filter.h"

namespace heron::sample {

struct Verdict {
  mlx::core::array accepted;  // int32 [B]: how many drafts each round accepted
  mlx::core::array tokens;    // int32 [B, N + 1]: drafts before `accepted`, then the next token
};

// target: B * (N + 1) rows; drafts: int32 [B, N], N >= 1; draft_probs: float32 [B, N, V]
// or none; keys: uint32 [B * (N + 1), 2], each target row's position key.
Verdict verify(const Filtered& target, const mlx::core::array& drafts,
               const std::optional<mlx::core::array>& draft_probs, const mlx::core::array& keys);

}  // namespace heron::sample
