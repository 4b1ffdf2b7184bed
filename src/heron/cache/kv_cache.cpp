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

mx::array write_positions(std::optional<mx::array>& buffer, const mx::array& rows, int offset,
                          int step) {
  const int end = offset + rows.shape(2);
  if (!buffer || end > buffer->shape(2)) {
    // Keep the first `offset` positions (a rewind may have left a stale tail) and add
    // whole steps until the new rows fit.
    const int kept = buffer ? offset : 0;
    auto shape = rows.shape();
    shape[2] = ((end - kept + step - 1) / step) * step;
    auto fresh = mx::zeros(shape, rows.dtype());
    if (buffer) {
      const auto& b = buffer->shape();
      fresh =
          mx::concatenate({mx::slice(*buffer, {0, 0, 0, 0}, {b[0], b[1], offset, b[3]}), fresh}, 2);
    }
    buffer = fresh;
  }
  const auto& b = buffer->shape();
  buffer =
      mx::slice_update(*buffer, rows, mx::Shape{0, 0, offset, 0}, mx::Shape{b[0], b[1], end, b[3]});
  return mx::slice(*buffer, {0, 0, 0, 0}, {b[0], b[1], end, b[3]});
}

KVHistory KVCache::update(const mx::array& keys, const mx::array& values) {
  auto history = KVHistory{write_positions(keys_, keys, offset_, kStep),
                           write_positions(values_, values, offset_, kStep)};
  offset_ += keys.shape(2);
  return history;
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
  return kv_segment_from(begin, end, std::move(tensors), {keys_, values_}, /*every_position=*/true,
                         "a KV cache");
}

SegmentPtr kv_segment_from(int begin, int end, std::vector<mx::array> tensors,
                           const std::vector<std::optional<mx::array>>& like, bool every_position,
                           const std::string& cache_kind) {
  auto fits = [&](const mx::array& a, const std::optional<mx::array>& buffer) {
    const bool length = every_position ? a.shape(2) == end - begin : a.shape(2) <= end - begin;
    return a.ndim() == 4 && length && mx::issubdtype(a.dtype(), mx::floating) &&
           a.shape(0) == tensors[0].shape(0) && a.shape(1) == tensors[0].shape(1) &&
           a.shape(2) == tensors[0].shape(2) && a.dtype() == tensors[0].dtype() &&
           (!buffer || (a.shape(0) == buffer->shape(0) && a.shape(1) == buffer->shape(1) &&
                        a.shape(3) == buffer->shape(3) && a.dtype() == buffer->dtype()));
  };
  bool ok = tensors.size() == like.size() && begin >= 0 && end > begin;
  for (size_t i = 0; ok && i < tensors.size(); ++i) ok = fits(tensors[i], like[i]);
  if (!ok) throw Error("the saved tensors are not " + cache_kind + " segment of this model");
  return std::make_unique<KVSegment>(begin, end, std::move(tensors));
}

KVSegment::KVSegment(int begin, const mx::array& keys, mx::array values)
    : KVSegment(begin, begin + keys.shape(2), {keys, std::move(values)}) {}

KVSegment::KVSegment(int begin, int end, mx::array keys, mx::array values)
    : KVSegment(begin, end, {std::move(keys), std::move(values)}) {}

KVSegment::KVSegment(int begin, int end, std::vector<mx::array> parts)
    : begin_(begin), end_(end), parts_(std::move(parts)) {}

size_t KVSegment::nbytes() const {
  size_t n = 0;
  for (const auto& p : parts_) n += p.nbytes();
  return n;
}

std::pair<SegmentPtr, SegmentPtr> KVSegment::split(int at) const {
  if (at <= begin() || at >= end()) {
    throw Error("cannot split a KV segment " + std::to_string(begin()) + ".." +
                std::to_string(end()) + " at " + std::to_string(at));
  }
  // Each half keeps the positions it holds; the data may start past the cut.
  const int len = parts_[0].shape(2);
  const int cut = std::clamp(at - data_begin(), 0, len);
  std::vector<mx::array> first, second;
  for (const auto& p : parts_) {
    first.push_back(owned_positions(p, 0, cut));
    second.push_back(owned_positions(p, cut, len));
  }
  return {std::make_unique<KVSegment>(begin_, at, std::move(first)),
          std::make_unique<KVSegment>(at, end_, std::move(second))};
}

SegmentPtr KVSegment::merge(const Segment& next) const {
  const auto* kv = dynamic_cast<const KVSegment*>(&next);
  if (kv == nullptr || next.begin() != end() || kv->parts_.size() != parts_.size()) {
    throw Error("cannot merge a segment at " + std::to_string(next.begin()) +
                " after a KV segment ending at " + std::to_string(end()));
  }
  // Data that does not run on into next's is of no use at the merged end.
  if (next.data_begin() != next.begin()) {
    return std::make_unique<KVSegment>(begin_, kv->end_, kv->parts_);
  }
  std::vector<mx::array> joined;
  for (size_t i = 0; i < parts_.size(); ++i) {
    joined.push_back(mx::concatenate({parts_[i], kv->parts_[i]}, 2));
  }
  return std::make_unique<KVSegment>(begin_, kv->end_, std::move(joined));
}

}  // namespace heron::cache
