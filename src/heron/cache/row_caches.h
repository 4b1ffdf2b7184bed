#pragma once
// A batched forward's view of one layer: each row of the batch is its own sequence and
// keeps its own cache, so rows at different lengths, or sharing a prefix in the trie, need
// no common buffer. The layers that read a cache run their cached part once per row
// (model/layers/by_row.h); everything else in the forward sees the whole batch.
#include <vector>

#include "heron/cache/cache.h"

namespace heron::cache {

class RowCaches final : public Cache {
 public:
  explicit RowCaches(std::vector<Cache*> rows) : rows_(std::move(rows)) {}
  int rows() const { return static_cast<int>(rows_.size()); }
  Cache& row(int r) const { return *rows_.at(static_cast<size_t>(r)); }

  // A view keeps no state of its own: the rows' caches answer for themselves.
  KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) override;
  int offset() const override;
  void rewind(int n) override;
  size_t nbytes() const override { return 0; }
  SegmentPtr save(int begin, int end) const override;
  void load(const Segment& segment) override;
  SegmentPtr segment_from(int begin, int end, std::vector<mlx::core::array> tensors) const override;

 private:
  std::vector<Cache*> rows_;
};

// Per layer, a view over that layer of every row's caches (each indexed by layer).
Caches row_views(const std::vector<Caches*>& rows);

}  // namespace heron::cache
