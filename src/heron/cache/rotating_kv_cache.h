#pragma once
// A sliding-window layer's cache. A query at position p sees keys (p - window, p], so
// the state at an offset is the last window - 1 positions; the cache keeps those plus
// `slack` more in a ring buffer of window + slack slots, so memory is bounded however
// long the sequence grows, and a write can still be rolled back by up to `slack`
// positions after the ring has wrapped (a rejected speculative draft, a re-rendered
// turn). Once wrapped, keys come back in slot order with a mask saying which slot each
// query may see; before, as consecutive positions like a KV cache's.
//
// Segments are KVSegments: every position of [begin, end) while the ring still held
// them when saved, otherwise only the window - 1 before end, so they restore end.
// Restore points (capture_at) keep that window - 1 as the writes cross them, so the
// state there can be saved and rewound to after the ring has moved on (a regenerate
// after an answer longer than the slack).
#include <optional>
#include <utility>
#include <vector>

#include "heron/cache/cache.h"

namespace heron::cache {

class RotatingKVCache : public Cache {
 public:
  static constexpr int kSlack = 256;
  static constexpr int kStep = 256;  // buffer growth before the ring is full

  explicit RotatingKVCache(int window, int slack = kSlack);

  KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) override;
  int offset() const override { return offset_; }
  void rewind(int n) override;
  size_t nbytes() const override;
  SegmentPtr save(int begin, int end) const override;
  void load(const Segment& segment) override;
  SegmentPtr segment_from(int begin, int end, std::vector<mlx::core::array> tensors) const override;
  int needs_from(int offset) const override;
  int held_from() const override { return held_from_; }
  int held_from_at(int offset) const override;
  void capture_at(const std::vector<int>& offsets) override;
  int rollback_limit() const override { return slack_; }
  int capacity() const { return window_ + slack_; }

 private:
  int slots() const { return keys_ ? keys_->shape(2) : 0; }
  // Positions [from, to) (held, to - from <= capacity()) in order, in arrays of their own.
  std::pair<mlx::core::array, mlx::core::array> positions(int from, int to) const;
  // Stores positions [at, at + n) in their slots (the last capacity() when n is more).
  void write(int at, mlx::core::array keys, mlx::core::array values);
  // The slots in order of position, each query's visible ones marked.
  KVHistory wrapped_history(int first_query, int queries) const;
  // Before writing keys/values at `at`: captures the scheduled offsets they cross.
  void capture_crossed(int at, const mlx::core::array& keys, const mlx::core::array& values);

  // The state at `offset`: positions [needs_from(offset), offset), arrays of their own.
  struct Capture {
    int offset;
    mlx::core::array keys, values;
  };
  const Capture* capture(int offset) const;

  int window_, slack_;
  std::optional<mlx::core::array> keys_, values_;
  int offset_ = 0;
  int held_from_ = 0;  // positions [held_from_, offset_) are in the ring
  std::vector<int> scheduled_;
  std::vector<Capture> captures_;
};

}  // namespace heron::cache
