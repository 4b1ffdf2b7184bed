#include "heron/engine/sequence.h"

#include <algorithm>

namespace heron::engine {

void Sequence::truncate(size_t n) {
  for (auto& c : caches) {
    // A cache that fell out of step (an error mid-write) is rewound to what we know.
    const int drop = c->offset() - static_cast<int>(std::min(n, tokens.size()));
    if (drop > 0) c->rewind(drop);
  }
  if (n < tokens.size()) tokens.resize(n);
}

size_t Sequence::common_prefix(const std::vector<int>& prompt) const {
  const auto limit = std::min(tokens.size(), prompt.size());
  return static_cast<size_t>(std::mismatch(tokens.begin(),
                                           tokens.begin() + static_cast<std::ptrdiff_t>(limit),
                                           prompt.begin())
                                 .first -
                             tokens.begin());
}

}  // namespace heron::engine
