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
// [B, kv_heads, end - data_begin, head_dim] each (or a latent cache's rows alone: its
// parts are whatever per-position arrays its cache keeps). A full KV cache's segments hold
// every position (any cut is exact, so they split anywhere); a sliding window's may hold
// only the last positions its state at end needs.
class KVSegment : public Segment {
 public:
  // Every position of [begin, begin + keys.shape(2)).
  KVSegment(int begin, const mlx::core::array& keys, mlx::core::array values);
  // The last keys.shape(2) positions of [begin, end).
  KVSegment(int begin, int end, mlx::core::array keys, mlx::core::array values);
  // The same for any arrays of equal length along axis 2.
  KVSegment(int begin, int end, std::vector<mlx::core::array> parts);
  int begin() const override { return begin_; }
  int end() const override { return end_; }
  int data_begin() const override { return end_ - parts_[0].shape(2); }
  size_t nbytes() const override;
  std::pair<SegmentPtr, SegmentPtr> split(int at) const override;
  SegmentPtr merge(const Segment& next) const override;
  std::vector<mlx::core::array> tensors() const override { return parts_; }
  const mlx::core::array& keys() const { return parts_[0]; }
  const mlx::core::array& values() const { return parts_.at(1); }

 private:
  int begin_, end_;
  std::vector<mlx::core::array> parts_;
};

// A KVSegment rebuilt from Segment::tensors(): one array per part, each checked against
// the cache's buffer for it (`like`, where it has one): every position of [begin, end),
// or at most that many.
SegmentPtr kv_segment_from(int begin, int end, std::vector<mlx::core::array> tensors,
                           const std::vector<std::optional<mlx::core::array>>& like,
                           bool every_position, const std::string& cache_kind);

// Writes rows [B, H, n, D] at positions [offset, offset + n) of `buffer` (made, or grown
// by whole `step`s keeping its first `offset` positions, when they do not fit) and
// returns positions [0, offset + n) of it.
mlx::core::array write_positions(std::optional<mlx::core::array>& buffer,
                                 const mlx::core::array& rows, int offset, int step);

// Positions [from, to) of a [B, H, T, D] array in a buffer of their own size.
mlx::core::array owned_positions(const mlx::core::array& a, int from, int to);

}  // namespace heron::cache
