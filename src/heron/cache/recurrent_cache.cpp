#include "heron/cache/recurrent_cache.h"

#include <string>

#include <mlx/ops.h>

#include "heron/cache/kv_cache.h"
#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

namespace {

int values_of(const mx::Shape& shape) {
  int n = 1;
  for (int d : shape) n *= d;
  return n;
}

}  // namespace

RecurrentCache::RecurrentCache(mx::Shape conv, mx::Shape delta, int slack)
    : conv_shape_(std::move(conv)), delta_shape_(std::move(delta)), slack_(slack) {}

KVHistory RecurrentCache::update(const mx::array& /*keys*/, const mx::array& /*values*/) {
  throw Error("a recurrent layer's cache takes no keys and values");
}

const RecurrentCache::State* RecurrentCache::kept(int offset) const {
  auto it = states_.find(offset);
  return it == states_.end() ? nullptr : &it->second;
}

std::optional<RecurrentCache::State> RecurrentCache::state() const {
  if (offset_ == 0) return std::nullopt;
  const State* s = kept(offset_);
  if (s == nullptr) {
    throw Error("the recurrent cache holds no state at position " + std::to_string(offset_));
  }
  return *s;
}

std::vector<int> RecurrentCache::keeps(int n) const {
  std::vector<int> at;
  for (int t = 1; t <= n; ++t) {
    if (t >= n - slack_ || scheduled_.contains(offset_ + t)) at.push_back(t);
  }
  return at;
}

void RecurrentCache::advance(int n, std::vector<State> states) {
  const auto at = keeps(n);
  if (states.size() != at.size()) {
    throw Error("a recurrent write of " + std::to_string(n) + " positions returned " +
                std::to_string(states.size()) + " states, not " + std::to_string(at.size()));
  }
  for (size_t i = 0; i < at.size(); ++i) {
    const int p = offset_ + at[i];
    states_.insert_or_assign(p, std::move(states[i]));
    if (scheduled_.contains(p)) held_points_.insert(p);
  }
  offset_ += n;
  std::erase_if(states_, [&](const auto& s) {
    return s.first < offset_ - slack_ && !held_points_.contains(s.first);
  });
}

void RecurrentCache::rewind(int n) {
  if (n < 0 || n > offset_) {
    throw Error("cannot rewind " + std::to_string(n) + " of " + std::to_string(offset_) +
                " positions");
  }
  offset_ -= n;
  // States past the new end belong to positions that are gone. Without one at the end,
  // state() fails until load() brings it.
  std::erase_if(states_, [&](const auto& s) { return s.first > offset_; });
  std::erase_if(held_points_, [&](int p) { return p > offset_; });
}

size_t RecurrentCache::nbytes() const {
  size_t bytes = 0;
  for (const auto& [offset, s] : states_) bytes += s.conv.nbytes() + s.delta.nbytes();
  return bytes;
}

int RecurrentCache::held_from_at(int offset) const {
  return offset == 0 || kept(offset) != nullptr ? needs_from(offset) : offset;
}

void RecurrentCache::capture_at(const std::vector<int>& offsets) {
  scheduled_ = std::set<int>(offsets.begin(), offsets.end());
}

std::vector<mx::array> RecurrentCache::parts_of(const State& s) const {
  const int batch = s.delta.shape(0);
  return {mx::reshape(s.conv, {batch, 1, 1, values_of(conv_shape_)}),
          mx::reshape(s.delta, {batch, 1, 1, values_of(delta_shape_)})};
}

SegmentPtr RecurrentCache::save(int begin, int end) const {
  if (begin < 0 || end <= begin || end > offset_) {
    throw Error("cannot save positions " + std::to_string(begin) + ".." + std::to_string(end) +
                " of a recurrent cache holding " + std::to_string(offset_));
  }
  // The state at end, when the cache kept it; otherwise a segment that restores nothing.
  if (const State* s = kept(end)) return std::make_unique<KVSegment>(begin, end, parts_of(*s));
  return std::make_unique<KVSegment>(
      begin, end,
      std::vector<mx::array>{mx::zeros({1, 1, 0, values_of(conv_shape_)}, mx::float32),
                             mx::zeros({1, 1, 0, values_of(delta_shape_)}, mx::float32)});
}

void RecurrentCache::load(const Segment& segment) {
  const auto* kv = dynamic_cast<const KVSegment*>(&segment);
  if (kv == nullptr || segment.begin() != offset_) {
    throw Error("cannot load a segment at " + std::to_string(segment.begin()) +
                " into a recurrent cache holding " + std::to_string(offset_));
  }
  offset_ = segment.end();
  const auto parts = kv->tensors();
  const int n = parts[0].shape(2);
  if (n == 0) return;  // the state comes with a later segment
  auto last = [&](const mx::array& p, const mx::Shape& shape) {
    mx::Shape full{p.shape(0)};
    full.insert(full.end(), shape.begin(), shape.end());
    return mx::reshape(mx::slice(p, {0, 0, n - 1, 0}, p.shape()), full);
  };
  states_.insert_or_assign(offset_,
                           State{last(parts[0], conv_shape_), last(parts[1], delta_shape_)});
  held_points_.insert(offset_);
}

SegmentPtr RecurrentCache::segment_from(int begin, int end, std::vector<mx::array> tensors) const {
  const std::vector<std::optional<mx::array>> like{
      mx::zeros({1, 1, 1, values_of(conv_shape_)}, mx::float32),
      mx::zeros({1, 1, 1, values_of(delta_shape_)}, mx::float32)};
  return kv_segment_from(begin, end, std::move(tensors), like, false, "a recurrent");
}

}  // namespace heron::cache
