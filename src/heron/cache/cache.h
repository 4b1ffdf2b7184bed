#pragma once
// Per-layer attention cache. update() appends this step's keys/values and returns
// everything the queries may attend to. The prefix cache (prefix_cache.h) moves a
// cache's state in and out as Segments: what one trie edge needs, saved from the live
// cache and loaded back into it.
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <mlx/array.h>

namespace heron::cache {

// What attention sees: all cached keys/values including this step's. Without a mask
// the keys are consecutive positions ending at the last query and the mask is causal,
// aligned to that end; a cache that stores them otherwise (a rotating buffer) says
// which keys each query may see.
struct KVHistory {
  mlx::core::array keys;                 // [B, kv_heads, T, head_dim]
  mlx::core::array values;               // [B, kv_heads, T, head_dim]
  std::optional<mlx::core::array> mask;  // [L, T] bool: query i may see key j
};

// One cache's saved state for the positions [begin, end) of a sequence: what the cache
// needs, holding the state at begin, to hold the state at end. Immutable.
class Segment {
 public:
  virtual ~Segment() = default;
  virtual int begin() const = 0;
  virtual int end() const = 0;
  // The first position whose data it holds. begin(): all of its positions (it splits
  // anywhere and restores every offset inside it). Later: only what a cache needs at
  // end() (a sliding window's last keys), so it restores end() and nothing before.
  virtual int data_begin() const { return begin(); }
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

  // The first position whose data the cache needs to hold its state at `offset` (0:
  // it attends to everything before).
  virtual int needs_from(int /*offset*/) const { return 0; }
  // The first position the cache still holds (a rotating buffer forgets the oldest).
  virtual int held_from() const { return 0; }
  // The same for the cache rewound to `offset` (<= offset()): a cache that captured its
  // state there (capture_at) holds what that state needs, whatever was written since.
  virtual int held_from_at(int /*offset*/) const { return held_from(); }
  // Restore points: while the next writes pass these offsets, keep the state at each
  // (what save(·, offset) and a rewind to offset need), however far writes go on. A
  // cache that forgets nothing has nothing to do. Captures below the offset a rewind
  // goes to stay; those above it go.
  virtual void capture_at(const std::vector<int>& /*offsets*/) {}
  // A write followed by a rewind of at most this many positions leaves a usable state
  // (speculation's rollback).
  virtual int rollback_limit() const { return std::numeric_limits<int>::max(); }
};

// Whether the cache, rewound to `offset` (<= its offset()), still holds its state there.
inline bool holds_state_at(const Cache& cache, int offset) {
  return cache.held_from_at(offset) <= cache.needs_from(offset);
}

using Caches = std::vector<std::unique_ptr<Cache>>;

}  // namespace heron::cache
