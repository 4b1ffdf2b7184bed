#pragma once
// Per-layer attention cache. update() appends this step's keys/values and returns
// everything the queries may attend to. Snapshots and rewind arrive with the prefix
// cache; offset() and rewind() are the seams they build on.
#include <memory>
#include <vector>

#include <mlx/array.h>

namespace heron::cache {

// What attention sees: all cached keys/values including this step's. The mask is
// causal over the last `query_len` rows, aligned to the end of the history.
struct KVHistory {
  mlx::core::array keys;    // [B, kv_heads, T, head_dim]
  mlx::core::array values;  // [B, kv_heads, T, head_dim]
};

class Cache {
 public:
  virtual ~Cache() = default;
  virtual KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) = 0;
  virtual int offset() const = 0;
  // Drop the last n positions (n <= offset()).
  virtual void rewind(int n) = 0;
  virtual size_t nbytes() const = 0;
};

using Caches = std::vector<std::unique_ptr<Cache>>;

}  // namespace heron::cache
