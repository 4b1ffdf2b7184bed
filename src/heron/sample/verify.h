#pragma once
// Speculative verification (Leviathan et al. 2023, Chen et al. 2023) on the device: which
// drafts the target accepts, and the token that follows them. Row i of the target
// distribution is generated position first_position + i; draft i is proposed for it.
// With draft distributions q, draft i is accepted with probability min(1, p/q) and a
// rejection draws from norm(max(p - q, 0)). Point-mass drafts (no q) are accepted when
// the target's own draw for that position equals them, which is the same rule with q a
// point mass, and draws exactly what plain decoding with the same seed draws. After a
// full acceptance the last row gives the bonus token. Temperature 0 is the same path
// with point-mass targets.
#include <cstdint>
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/filter.h"

namespace heron::sample {

struct Verdict {
  mlx::core::array accepted;  // int32 []: how many drafts were accepted
  mlx::core::array tokens;    // int32 [N + 1]: drafts before row `accepted`, then the next token
};

// target: N + 1 rows; drafts: N >= 1 ids; draft_probs: float32 [N, V] or none.
Verdict verify(const Filtered& target, const std::vector<int>& drafts,
               const std::optional<mlx::core::array>& draft_probs, uint64_t seed,
               uint64_t first_position);

}  // namespace heron::sample
