#include "heron/cache/rotating_kv_cache.h"

#include <algorithm>
#include <climits>
#include <memory>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/cache/band_mask.h"
#include "heron/cache/kv_cache.h"
#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

namespace {

// [B, H, 0, D]: a segment that holds no position.
mx::array no_positions(const mx::array& like) {
  return mx::zeros({like.shape(0), like.shape(1), 0, like.shape(3)}, like.dtype());
}

mx::array positions_slice(const mx::array& a, int from, int to) {
  const auto& s = a.shape();
  return mx::slice(a, {0, 0, from, 0}, {s[0], s[1], to, s[3]});
}

}  // namespace

RotatingKVCache::RotatingKVCache(int window, int slack) : window_(window), slack_(slack) {
  if (window < 1 || slack < 1) {
    throw Error("a sliding-window cache needs a window and slack of at least 1 (got " +
                std::to_string(window) + " and " + std::to_string(slack) + ")");
  }
}

int RotatingKVCache::needs_from(int offset) const {
  return std::max(0, offset - window_ + 1);
}

const RotatingKVCache::Capture* RotatingKVCache::capture(int offset) const {
  for (const auto& c : captures_) {
    if (c.offset == offset) return &c;
  }
  return nullptr;
}

int RotatingKVCache::held_from_at(int offset) const {
  return capture(offset) ? std::min(held_from_, needs_from(offset)) : held_from_;
}

void RotatingKVCache::capture_at(const std::vector<int>& offsets) {
  scheduled_ = offsets;
}

void RotatingKVCache::capture_crossed(int at, const mx::array& keys, const mx::array& values) {
  const int n = keys.shape(2);
  for (int p : scheduled_) {
    if (p <= at || p > at + n) continue;
    // What the state at p needs: held positions before this write, then the chunk's own.
    const int from = needs_from(p);
    auto k = positions_slice(keys, std::max(0, from - at), p - at);
    auto v = positions_slice(values, std::max(0, from - at), p - at);
    if (from < at) {
      auto [held_k, held_v] = positions(from, at);
      k = mx::concatenate({held_k, k}, 2);
      v = mx::concatenate({held_v, v}, 2);
    }
    captures_.push_back({p, mx::copy(k), mx::copy(v)});
    // Computed now, so they stop holding the ring's buffer (the write below then copies it
    // once instead of updating it in place) and the chunk's keys.
    mx::async_eval({captures_.back().keys, captures_.back().values});
  }
}

void RotatingKVCache::write(int at, mx::array keys, mx::array values) {
  const int cap = capacity();
  int n = keys.shape(2);
  if (n > cap) {
    keys = positions_slice(keys, n - cap, n);
    values = positions_slice(values, n - cap, n);
    at += n - cap;
    n = cap;
  }
  if (slots() < std::min(cap, at + n)) {
    // Grow in kSteps while positions are their own slots; to the whole ring once it wraps.
    const int want = at + n > cap ? cap : std::min(cap, (at + n + kStep - 1) / kStep * kStep);
    auto k_shape = keys.shape();
    auto v_shape = values.shape();
    k_shape[2] = want - slots();
    v_shape[2] = want - slots();
    auto k_new = mx::zeros(k_shape, keys.dtype());
    auto v_new = mx::zeros(v_shape, values.dtype());
    keys_ = keys_ ? mx::concatenate({*keys_, k_new}, 2) : k_new;
    values_ = values_ ? mx::concatenate({*values_, v_new}, 2) : v_new;
  }
  auto put = [&](int slot, int from, int to) {
    const auto& ks = keys_->shape();
    const auto& vs = values_->shape();
    const int len = to - from;
    keys_ = mx::slice_update(*keys_, positions_slice(keys, from, to), mx::Shape{0, 0, slot, 0},
                             mx::Shape{ks[0], ks[1], slot + len, ks[3]});
    values_ =
        mx::slice_update(*values_, positions_slice(values, from, to), mx::Shape{0, 0, slot, 0},
                         mx::Shape{vs[0], vs[1], slot + len, vs[3]});
  };
  const int slot = at % cap;
  const int first = std::min(n, cap - slot);
  put(slot, 0, first);
  if (first < n) put(0, first, n);  // wraps round
  held_from_ = std::max(held_from_, at + n - cap);
}

std::pair<mx::array, mx::array> RotatingKVCache::positions(int from, int to) const {
  if (from == to) return {no_positions(*keys_), no_positions(*values_)};
  const int cap = capacity();
  const int slot = from % cap;
  const int len = to - from;
  if (slot + len <= cap) {
    return {owned_positions(*keys_, slot, slot + len), owned_positions(*values_, slot, slot + len)};
  }
  const int rest = len - (cap - slot);
  return {
      mx::concatenate({positions_slice(*keys_, slot, cap), positions_slice(*keys_, 0, rest)}, 2),
      mx::concatenate({positions_slice(*values_, slot, cap), positions_slice(*values_, 0, rest)},
                      2)};
}

KVHistory RotatingKVCache::wrapped_history(int first_query, int queries) const {
  // Slot j holds the latest position p = j (mod capacity) written so far; one the ring
  // no longer holds is never visible.
  const int cap = capacity();
  const int last = first_query + queries - 1;
  std::vector<int32_t> slot_position(static_cast<size_t>(cap));
  for (int j = 0; j < cap; ++j) {
    const int p = last - ((last - j) % cap + cap) % cap;
    slot_position[static_cast<size_t>(j)] = p >= held_from_ ? p : INT_MAX / 2;
  }
  mx::array mask = mx::array(false);
  if (queries == 1) {
    auto visible = std::make_unique<bool[]>(static_cast<size_t>(cap));
    for (int j = 0; j < cap; ++j) {
      const int p = slot_position[static_cast<size_t>(j)];
      visible[static_cast<size_t>(j)] = p <= last && p > last - window_;
    }
    mask = mx::array(visible.get(), {1, cap}, mx::bool_);
  } else {
    auto cols = mx::array(slot_position.data(), {1, cap}, mx::int32);
    auto rows = mx::reshape(mx::arange(first_query, last + 1, mx::int32), {queries, 1});
    mask = mx::logical_and(mx::less_equal(cols, rows),
                           mx::greater(cols, mx::subtract(rows, mx::array(window_))));
  }
  return {*keys_, *values_, mask};
}

KVHistory RotatingKVCache::update(const mx::array& keys, const mx::array& values) {
  const int n = keys.shape(2);
  const int at = offset_;
  const int first = needs_from(at);
  if (held_from_ > first) {
    throw Error("the sliding-window cache no longer holds position " + std::to_string(first) +
                " (it holds from " + std::to_string(held_from_) + "), which position " +
                std::to_string(at) + " attends to");
  }
  if (!scheduled_.empty()) capture_crossed(at, keys, values);
  const int cap = capacity();
  if (at + n <= cap) {
    // The ring has not wrapped this far: slots are positions.
    write(at, keys, values);
    offset_ = at + n;
    std::optional<mx::array> mask;
    if (at + n - window_ > first) mask = band_mask(at, n, first, at + n - first, window_);
    return {positions_slice(*keys_, first, at + n), positions_slice(*values_, first, at + n), mask};
  }
  if (at + n - first <= cap) {
    write(at, keys, values);
    offset_ = at + n;
    return wrapped_history(at, n);
  }
  // A chunk longer than the ring: the window before it, then the chunk, in order.
  auto k = keys;
  auto v = values;
  if (first < at) {
    auto [held_k, held_v] = positions(first, at);
    k = mx::concatenate({held_k, keys}, 2);
    v = mx::concatenate({held_v, values}, 2);
  }
  write(at, keys, values);
  offset_ = at + n;
  return {k, v, band_mask(at, n, first, at + n - first, window_)};
}

void RotatingKVCache::rewind(int n) {
  if (n < 0 || n > offset_) {
    throw Error("cannot rewind the sliding-window cache by " + std::to_string(n) +
                " positions (holds " + std::to_string(offset_) + ")");
  }
  offset_ -= n;
  held_from_ = std::min(held_from_, offset_);
  std::erase_if(captures_, [&](const Capture& c) { return c.offset > offset_; });
  // Back at a restore point the ring has moved past: put its window back.
  const Capture* c = capture(offset_);
  if (c && held_from_ > needs_from(offset_)) {
    if (c->keys.shape(2) > 0) write(needs_from(offset_), c->keys, c->values);
    held_from_ = needs_from(offset_);
  }
}

size_t RotatingKVCache::nbytes() const {
  size_t bytes = (keys_ ? keys_->nbytes() : 0) + (values_ ? values_->nbytes() : 0);
  for (const auto& c : captures_) bytes += c.keys.nbytes() + c.values.nbytes();
  return bytes;
}

SegmentPtr RotatingKVCache::save(int begin, int end) const {
  if (!keys_ || begin < 0 || end <= begin || end > offset_) {
    throw Error("cannot save positions " + std::to_string(begin) + ".." + std::to_string(end) +
                " of a sliding-window cache holding " + std::to_string(offset_));
  }
  // Every position while the ring still holds them (the segment then splits anywhere);
  // otherwise what the state at end needs, when it holds that or captured it.
  const Capture* c = capture(end);
  if (c && held_from_ > needs_from(end) && needs_from(end) > begin) {
    return std::make_unique<KVSegment>(begin, end, c->keys, c->values);
  }
  int from = std::max(begin, held_from_);
  if (from > begin) from = std::max(from, needs_from(end));
  from = std::min(from, end);
  auto [k, v] = positions(from, end);
  return std::make_unique<KVSegment>(begin, end, k, v);
}

void RotatingKVCache::load(const Segment& segment) {
  const auto* kv = dynamic_cast<const KVSegment*>(&segment);
  if (kv == nullptr || segment.begin() != offset_) {
    throw Error("cannot load a segment at " + std::to_string(segment.begin()) +
                " into a sliding-window cache holding " + std::to_string(offset_));
  }
  const int from = segment.data_begin();
  if (from > offset_) held_from_ = from;  // the positions before its data are unknown
  if (from < segment.end()) write(from, kv->keys(), kv->values());
  offset_ = segment.end();
  // Its end stays restorable however far the ring moves on (a regenerate resumes there),
  // as its snapshot is freed once it is live.
  const int need = needs_from(offset_);
  if (capture(offset_) == nullptr && held_from_ <= need && need < offset_) {
    auto [k, v] = positions(need, offset_);
    captures_.push_back({offset_, k, v});
    mx::async_eval({captures_.back().keys, captures_.back().values});
  }
}

SegmentPtr RotatingKVCache::segment_from(int begin, int end, std::vector<mx::array> tensors) const {
  return kv_segment_from(begin, end, std::move(tensors), {keys_, values_}, /*every_position=*/false,
                         "a sliding-window cache");
}

}  // namespace heron::cache
