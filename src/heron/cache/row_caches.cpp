#include "heron/cache/row_caches.h"

#include "heron/core/error.h"

namespace heron::cache {

namespace {

[[noreturn]] void per_row_only() {
  throw Error("a batch's caches are read and written one row at a time");
}

}  // namespace

KVHistory RowCaches::update(const mlx::core::array& /*keys*/, const mlx::core::array& /*values*/) {
  per_row_only();
}
int RowCaches::offset() const {
  per_row_only();
}
void RowCaches::rewind(int /*n*/) {
  per_row_only();
}
SegmentPtr RowCaches::save(int /*begin*/, int /*end*/) const {
  per_row_only();
}
void RowCaches::load(const Segment& /*segment*/) {
  per_row_only();
}
SegmentPtr RowCaches::segment_from(int /*begin*/, int /*end*/,
                                   std::vector<mlx::core::array> /*tensors*/) const {
  per_row_only();
}

Caches row_views(const std::vector<Caches*>& rows) {
  if (rows.empty()) throw Error("a batch needs at least one row");
  const size_t layers = rows[0]->size();
  for (const auto* r : rows) {
    if (r->size() != layers) throw Error("a batch's rows must have one cache per layer");
  }
  Caches views;
  for (size_t layer = 0; layer < layers; ++layer) {
    std::vector<Cache*> at;
    at.reserve(rows.size());
    for (const auto* r : rows) at.push_back((*r)[layer].get());
    views.push_back(std::make_unique<RowCaches>(std::move(at)));
  }
  return views;
}

}  // namespace heron::cache
