#pragma once
#include <optional>
#include <string>

#include "heron/cache/cache.h"

namespace heron::cache {

// Keys/values in preallocated buffers that grow in steps of kStep positions, so a
// decode step writes in place instead of concatenating the whole history.
class KVCache : public Cache {
 public:
  static constexpr int kStep = 256;

  KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) override;
  int offset() const override { return offset_; }
  void rewind(int n) override;
  size_t nbytes() const override;
  SegmentPtr save(int begin, int end) const override;
  void load(const Segment& segment) override;
  SegmentPtr segment_from(int begin, int end, std::vector<mlx::core::array> tensors) const override;
  int capacity() const;

 private:
  std::optional<mlx::core::array> keys_, values_;
  int offset_ = 0;
};

// The keys and values of positions [data_begin, end) of the segment [begin, end):
// [B, kv_heads, end - data_begin, head_dim]. A full KV cache's segments hold every
// position (any cut is exact, so they split anywhere); a sliding window's may hold only
// the last positions its state at end needs.
class KVSegment : public Segment {
 public:
  // Every position of [begin, begin + keys.shape(2)).
  KVSegment(int begin, const mlx::core::array& keys, mlx::core::array values);
  // The last keys.shape(2) positions of [begin, end).
  KVSegment(int begin, int end, mlx::core::array keys, mlx::core::array values);
  int begin() const override { return begin_; }
  int end() const override { return end_; }
  int data_begin() const override { return end_ - keys_.shape(2); }
  size_t nbytes() const override { return keys_.nbytes() + values_.nbytes(); }
  std::pair<SegmentPtr, SegmentPtr> split(int at) const override;
  SegmentPtr merge(const Segment& next) const override;
  std::vector<mlx::core::array> tensors() const override { return {keys_, values_}; }
  const mlx::core::array& keys() const { return keys_; }
  const mlx::core::array& values() const { return values_; }

 private:
  int begin_, end_;
  mlx::core::array keys_, values_;
};

// A KVSegment rebuilt from Segment::tensors(), checked against the cache's buffers
// (`like_keys`, `like_values`, when it has them): every position of [begin, end), or at
// most that many.
SegmentPtr kv_segment_from(int begin, int end, std::vector<mlx::core::array> tensors,
                           const std::optional<mlx::core::array>& like_keys,
                           const std::optional<mlx::core::array>& like_values, bool every_position,
                           const std::string& cache_kind);

// Positions [from, to) of a [B, H, T, D] array in a buffer of their own size.
mlx::core::array owned_positions(const mlx::core::array& a, int from, int to);

}  // namespace heron::cache
