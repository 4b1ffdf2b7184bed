#pragma once
#include <optional>

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
  SegmentPtr segment_from(int begin, int end,
                          std::vector<mlx::core::array> tensors) const override;
  int capacity() const;

 private:
  std::optional<mlx::core::array> keys_, values_;
  int offset_ = 0;
};

// The keys and values of positions [begin, end): [B, kv_heads, end - begin, head_dim].
// Any cut is exact, so a KV segment splits anywhere.
class KVSegment : public Segment {
 public:
  KVSegment(int begin, mlx::core::array keys, mlx::core::array values);
  int begin() const override { return begin_; }
  int end() const override { return begin_ + keys_.shape(2); }
  size_t nbytes() const override { return keys_.nbytes() + values_.nbytes(); }
  std::pair<SegmentPtr, SegmentPtr> split(int at) const override;
  SegmentPtr merge(const Segment& next) const override;
  std::vector<mlx::core::array> tensors() const override { return {keys_, values_}; }
  const mlx::core::array& keys() const { return keys_; }
  const mlx::core::array& values() const { return values_; }

 private:
  int begin_;
  mlx::core::array keys_, values_;
};

Caches make_kv_caches(int num_layers);

}  // namespace heron::cache
