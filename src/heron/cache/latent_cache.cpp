#include "heron/cache/latent_cache.h"

#include <mlx/ops.h>

#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

KVHistory LatentCache::history(const mx::array& rows) const {
  const auto& s = rows.shape();
  return {rows, mx::slice(rows, {0, 0, 0, 0}, {s[0], s[1], s[2], rank_})};
}

KVHistory LatentCache::update(const mx::array& latent, const mx::array& rotary_key) {
  const auto rows = mx::concatenate({latent, rotary_key}, 3);
  auto all = write_positions(rows_, rows, offset_, KVCache::kStep);
  offset_ += latent.shape(2);
  return history(all);
}

void LatentCache::rewind(int n) {
  if (n < 0 || n > offset_) {
    throw Error("cannot rewind the latent cache by " + std::to_string(n) + " positions (holds " +
                std::to_string(offset_) + ")");
  }
  offset_ -= n;
}

SegmentPtr LatentCache::save(int begin, int end) const {
  if (!rows_ || begin < 0 || end <= begin || end > offset_) {
    throw Error("cannot save positions " + std::to_string(begin) + ".." + std::to_string(end) +
                " of a latent cache holding " + std::to_string(offset_));
  }
  return std::make_unique<KVSegment>(begin, end,
                                     std::vector<mx::array>{owned_positions(*rows_, begin, end)});
}

void LatentCache::load(const Segment& segment) {
  const auto* kv = dynamic_cast<const KVSegment*>(&segment);
  if (kv == nullptr || kv->tensors().size() != 1 || segment.begin() != offset_ ||
      segment.data_begin() != segment.begin()) {
    throw Error("cannot load a segment at " + std::to_string(segment.begin()) +
                " into a latent cache holding " + std::to_string(offset_));
  }
  write_positions(rows_, kv->keys(), offset_, KVCache::kStep);
  offset_ = segment.end();
}

SegmentPtr LatentCache::segment_from(int begin, int end, std::vector<mx::array> tensors) const {
  auto segment = kv_segment_from(begin, end, std::move(tensors), {rows_}, /*every_position=*/true,
                                 "a latent cache");
  if (segment->tensors()[0].shape(3) != rank_ + rope_) {
    throw Error("the saved tensors are not a latent cache segment of this model");
  }
  return segment;
}

}  // namespace heron::cache
