#pragma once
// A linear-attention layer's cache (Qwen3-Next's and Qwen3.5's gated delta-net): the
// state after the last position, of one size however long the sequence grows: the last
// conv_kernel - 1 inputs of the causal convolution and the delta rule's state per value
// head, both float32. A state cannot be cut back the way keys and values can, so the
// cache keeps copies, which the layer's scan hands it as it runs: the states after each
// of the last `slack` positions (rejected drafts roll back without running the layer
// again) and the state at each restore point a write crosses (capture_at).
//
// Towards the prefix cache, the state at offset p counts as position p - 1's data, like a
// sliding window one position wide: segments are KVSegments whose "positions" are states
// ([B, 1, n, values] per part), so a segment holds the state at its end, restores that
// and nothing before, and splits and merges like any window's.
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "heron/cache/cache.h"

namespace heron::cache {

class RecurrentCache : public Cache {
 public:
  static constexpr int kSlack = 16;

  struct State {
    mlx::core::array conv;   // [B, conv_kernel - 1, channels]
    mlx::core::array delta;  // [B, value_heads, value_head_dim, key_head_dim]
  };

  // conv: {conv_kernel - 1, channels}; delta: {value_heads, value_head_dim, key_head_dim}.
  RecurrentCache(mlx::core::Shape conv, mlx::core::Shape delta, int slack = kSlack);

  // Not an attention cache: throws.
  KVHistory update(const mlx::core::array& keys, const mlx::core::array& values) override;
  // The state the next write continues from (nullopt at offset 0: zeros).
  std::optional<State> state() const;
  // Where a write of n positions must hand back its states: counts of positions
  // (1..n, ascending, n last) after which the cache keeps the state.
  std::vector<int> keeps(int n) const;
  // Records a write of n positions and the states after keeps(n), in that order.
  void advance(int n, std::vector<State> states);

  int offset() const override { return offset_; }
  void rewind(int n) override;
  size_t nbytes() const override;
  SegmentPtr save(int begin, int end) const override;
  void load(const Segment& segment) override;
  SegmentPtr segment_from(int begin, int end, std::vector<mlx::core::array> tensors) const override;
  int needs_from(int offset) const override { return offset > 0 ? offset - 1 : 0; }
  int held_from() const override { return held_from_at(offset_); }
  int held_from_at(int offset) const override;
  void capture_at(const std::vector<int>& offsets) override;
  int rollback_limit() const override { return slack_; }

 private:
  // The kept state at `offset` (offset <= offset()), if any.
  const State* kept(int offset) const;
  // The state as a segment's parts: [B, 1, 1, values] each.
  std::vector<mlx::core::array> parts_of(const State& s) const;

  mlx::core::Shape conv_shape_, delta_shape_;
  int slack_;
  int offset_ = 0;
  std::map<int, State> states_;  // by offset: the recent ones and the held points
  std::set<int> scheduled_;      // restore points the next writes keep as they cross them
  // Offsets whose states stay until a rewind goes below them: restore points crossed, and
  // states loaded from segments (their snapshots are freed once live).
  std::set<int> held_points_;
};

}  // namespace heron::cache
