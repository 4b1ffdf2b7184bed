#pragma once
// A conversation's KV cache and the tokens it holds, position for position, so the
// next request can reuse the longest common prefix.
#include <vector>

#include "heron/cache/cache.h"

namespace heron::engine {

struct Sequence {
  cache::Caches caches;
  std::vector<int> tokens;  // what the caches hold, in order

  // Keep only the first n tokens (n <= tokens.size()).
  void truncate(size_t n);
  // Length of the longest common prefix of tokens and `prompt`.
  size_t common_prefix(const std::vector<int>& prompt) const;
};

}  // namespace heron::engine
