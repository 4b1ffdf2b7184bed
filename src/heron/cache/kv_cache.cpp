#include "heron/cache/kv_cache.h"

#include <algorithm>

#include <mlx/ops.h>

#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

// A segment must not keep a larger buffer alive (its nbytes would lie). contiguous()
// copies a slice out of a larger buffer (measured on MLX 0.32.4: it shares only a slice
// that is the whole buffer, which then holds nothing more).
mx::array owned_positions(const mx::array& a, int from, int to) {
  const auto& s = a.shape();
  return mx::contiguous(mx::slice(a, {0, 0, from, 0}, {s[0], s[1], to, s[3]}));
}

int KVCache::capacity() const {
  return keys_ ? keys_->shape(2) : 0;
}

KVHistory KVCache::update(const mx::array& keys, const mx::array& values) {
  const int n = keys.shape(2);
  const int end = offset_ + n;
  if (end > capacity()) {
    // Keep the first offset_ positions (a rewind may have left a stale tail) and add
    // whole kSteps until the new tokens fit.
    const int kept = keys_ ? offset_ : 0;
    const int grow = ((end - kept + kStep - 1) / kStep) * kStep;
    auto k_shape = keys.shape();
    auto v_shape = values.shape();
    k_shape[2] = grow;
    v_shape[2] = grow;
    auto k_new = mx::zeros(k_shape, keys.dtype());
    auto v_new = mx::zeros(v_shape, values.dtype());
    if (keys_) {
      // Trim unused tail (after a rewind) before appending the fresh block.
      keys_ = mx::concatenate(
          {mx::slice(*keys_, {0, 0, 0, 0}, {k_shape[0], k_shape[1], offset_, k_shape[3]}), k_new},
          2);
      values_ = mx::concatenate(
          {mx::slice(*values_, {0, 0, 0, 0}, {v_shape[0], v_shape[1], offset_, v_shape[3]}), v_new},
          2);
    } else {
      keys_ = k_new;
      values_ = v_new;
    }
  }
  const auto& ks = keys_->shape();
  const auto& vs = values_->shape();
  keys_ = mx::slice_update(*keys_, keys, mx::Shape{0, 0, offset_, 0},
                           mx::Shape{ks[0], ks[1], end, ks[3]});
  values_ = mx::slice_update(*values_, values, mx::Shape{0, 0, offset_, 0},
                             mx::Shape{vs[0], vs[1], end, vs[3]});
  offset_ = end;
  return {mx::slice(*keys_, {0, 0, 0, 0}, {ks[0], ks[1], end, ks[3]}),
          mx::slice(*values_, {0, 0, 0, 0}, {vs[0], vs[1], end, vs[3]})};
}

void KVCache::rewind(int n) {
  if (n < 0 || n > offset_) {
    throw Error("cannot rewind the KV cache by " + std::to_string(n) + " positions (holds " +
                std::to_string(offset_) + ")");
  }
  offset_ -= n;
}

size_t KVCache::nbytes() const {
  return (keys_ ? keys_->nbytes() : 0) + (values_ ? values_->nbytes() : 0);
}

SegmentPtr KVCache::save(int begin, int end) const {
  if (!keys_ || begin < 0 || end <= begin || end > offset_) {
    throw Error("cannot save positions " + std::to_string(begin) + ".." + std::to_string(end) +
                " of a KV cache holding " + std::to_string(offset_));
  }
  return std::make_unique<KVSegment>(begin, owned_positions(*keys_, begin, end),
                                     owned_positions(*values_, begin, end));
}

void KVCache::load(const Segment& segment) {
  const auto* kv = dynamic_cast<const KVSegment*>(&segment);
  if (kv == nullptr || segment.begin() != offset_ || segment.data_begin() != segment.begin()) {
    throw Error("cannot load a segment at " + std::to_string(segment.begin()) +
                " into a KV cache holding " + std::to_string(offset_));
  }
  update(kv->keys(), kv->values());
}

SegmentPtr KVCache::segment_from(int begin, int end, std::vector<mx::array> tensors) const {
  return kv_segment_from(begin, end, std::move(tensors), keys_, values_, /*every_position=*/true,
                         "a KV cache");
}

SegmentPtr kv_segment_from(int begin, int end, std::vector<mx::array> tensors,
                           const std::optional<mx::array>& like_keys,
                           const std::optional<mx::array>& like_values, bool every_position,
                           const std::string& cache_kind) {
  auto fits = [&](const mx::array& a, const std::optional<mx::array>& like) {
    const bool length = every_position ? a.shape(2) == end - begin : a.shape(2) <= end - begin;
    return a.ndim() == 4 && length && mx::issubdtype(a.dtype(), mx::floating) &&
           (!like || (a.shape(0) == like->shape(0) && a.shape(1) == like->shape(1) &&
                      a.shape(3) == like->shape(3) && a.dtype() == like->dtype()));
  };
  // Values may be narrower or wider than keys (a latent cache's rotary keys), never longer.
  if (tensors.size() != 2 || begin < 0 || end <= begin || !fits(tensors[0], like_keys) ||
      !fits(tensors[1], like_values) || tensors[1].shape(0) != tensors[0].shape(0) ||
      tensors[1].shape(1) != tensors[0].shape(1) || tensors[1].shape(2) != tensors[0].shape(2) ||
      tensors[1].dtype() != tensors[0].dtype()) {
    throw Error("the saved tensors are not " + cache_kind + " segment of this model");
  }
  return std::make_unique<KVSegment>(begin, end, std::move(tensors[0]), std::move(tensors[1]));
}

KVSegment::KVSegment(int begin, const mx::array& keys, mx::array values)
    : KVSegment(begin, begin + keys.shape(2), keys, std::move(values)) {}
KVSegment::KVSegment(int begin, int end, mx::array keys, mx::array values)
    : begin_(begin), end_(end), keys_(std::move(keys)), values_(std::move(values)) {}

std::pair<SegmentPtr, SegmentPtr> KVSegment::split(int at) const {
  if (at <= begin() || at >= end()) {
    throw Error("cannot split a KV segment " + std::to_string(begin()) + ".." +
                std::to_string(end()) + " at " + std::to_string(at));
  }
  // Each half keeps the positions it holds; the data may start past the cut.
  const int len = keys_.shape(2);
  const int cut = std::clamp(at - data_begin(), 0, len);
  return {std::make_unique<KVSegment>(begin_, at, owned_positions(keys_, 0, cut),
                                      owned_positions(values_, 0, cut)),
          std::make_unique<KVSegment>(at, end_, owned_positions(keys_, cut, len),
                                      owned_positions(values_, cut, len))};
}

SegmentPtr KVSegment::merge(const Segment& next) const {
  const auto* kv = dynamic_cast<const KVSegment*>(&next);
  if (kv == nullptr || next.begin() != end()) {
    throw Error("cannot merge a segment at " + std::to_string(next.begin()) +
                " after a KV segment ending at " + std::to_string(end()));
  }
  // Data that does not run on into next's is of no use at the merged end.
  if (next.data_begin() != next.begin()) {
    return std::make_unique<KVSegment>(begin_, kv->end_, kv->keys_, kv->values_);
  }
  return std::make_unique<KVSegment>(begin_, kv->end_, mx::concatenate({keys_, kv->keys_}, 2),
                                     mx::concatenate({values_, kv->values_}, 2));
}

}  // namespace heron::cache
