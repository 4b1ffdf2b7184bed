#pragma once
// Per-layer attention cache. update() appends this step's keys/values and returns
// everything the queries may attend to. The prefix cache (prefix_cache.h) moves a
// cache's state in and out as Segments: what one trie edge needs, saved from the live
// cache and loaded back into it.
#include <memory>
#include <utility>
#include <vector>

#include <mlx/array.h>

namespace heron::cache {

// What attention sees: all cached keys/values including this step's. The mask is
// causal over the last `query_len` rows, aligned to the end of the history.
struct KVHistory {
  mlx::core::array keys;    // [B, kv_heads, T, head_dim]
  mlx::core::array values;  // [B, kv_heads, T, head_dim]
};

// One cache's saved state for the positions [begin, end) of a sequence: what the cache
// needs, holding the state at begin, to hold the state at end. Immutable.
class Segment {
 public:
  virtual ~Segment() = default;
  virtual int begin() const = 0;
  virtual int end() const = 0;
  // Bytes it holds (exactly what it keeps alive).
  virtual size_t nbytes() const = 0;
  // [begin, at) and [at, end), begin < at < end.
  virtual std::pair<std::unique_ptr<Segment>, std::unique_ptr<Segment>> split(int at) const = 0;
  // This segment followed by `next` (next.begin() == end()), as one.
  virtual std::unique_ptr<Segment> merge(const Segment& next) const = 0;
  // The arrays to store it elsewhere (the disk tier); Cache::segment_from rebuilds it.
  virtual std::vector<mlx::core::array> tensors() const = 0;
};

using SegmentPtr = std::unique_ptr<Segment>;

class Cache {
 public:
  virtual ~Cache() = default;
  virtual KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) = 0;
  virtual int offset() const = 0;
  // Drop the last n positions (n <= offset()).
  virtual void rewind(int n) = 0;
  virtual size_t nbytes() const = 0;
  // A copy of the live state for [begin, end) (end <= offset()), independent of the live
  // buffers (they may be overwritten after a rewind). Lazy: evaluate its tensors().
  virtual SegmentPtr save(int begin, int end) const = 0;
  // Appends a saved segment; offset() must equal segment.begin().
  virtual void load(const Segment& segment) = 0;
  // Rebuilds a segment of this kind of cache from Segment::tensors(); throws heron::Error
  // when the tensors cannot be one (their shapes or types do not fit this cache).
  virtual SegmentPtr segment_from(int begin, int end,
                                  std::vector<mlx::core::array> tensors) const = 0;
};

using Caches = std::vector<std::unique_ptr<Cache>>;

}  // namespace heron::cache
