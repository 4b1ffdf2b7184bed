#pragma once
// A prediction head drafting for its model: the model's own multi-token-prediction head
// (Qwen3.5, Qwen3-Next) or a trained draft head (model/layers/draft_head.h). The head pairs the
// target's final hidden state at each position t with the committed token t + 1 and keeps its
// attention's KV cache level with the committed stream: before a proposal, pairs past what both
// still agree on are rewound and the new ones run in one forward. A proposal starts from the last
// pair (the last committed token and the hidden state of the position before it) and chains: each
// further draft pairs the previous draft with the head's own hidden state, since the target has not
// run that position. Positions whose hidden states it never heard (a prefix the prefix cache
// restored from another conversation) it starts after. Drafts are drawn as DraftDraws says.
#include <vector>

#include <mlx/array.h>

#include "heron/model/model.h"
#include "heron/spec/draft_draws.h"
#include "heron/spec/drafter.h"

namespace heron::spec {

class HeadDrafter : public Drafter {
 public:
  // `head` (and its model) outlive the drafter; used on the MLX thread only.
  HeadDrafter(const model::PredictionHead& head, int context);
  void reset(const sample::SamplingOptions& sampling) override;
  void committed(std::span<const int> tokens) override;
  Draft propose(int max) override;
  bool reads_hiddens() const override { return true; }
  void target_hiddens(int first, const mlx::core::array& hiddens) override;

 private:
  // The target's hidden states of positions [from, to), or none when it lacks some.
  std::optional<mlx::core::array> hiddens(int from, int to) const;
  // Forgets hidden states and pairs from position `from` on (their inputs changed).
  void forget_from(int from);
  // Joins contiguous runs of hidden states into one array each.
  void join_runs();
  static constexpr size_t kRunsBeforeJoining = 16;
  // Brings the cache to the pairs of positions [start_, sequence_.size() - 2).
  void catch_up();

  const model::PredictionHead& head_;
  int context_;
  cache::Caches caches_;
  struct Rows {
    int first;
    mlx::core::array rows;  // [1, L, hidden]
  };
  std::vector<Rows> hiddens_;  // ascending, contiguous runs
  std::vector<int> sequence_;  // the target's committed sequence
  std::vector<int> previous_;  // the last request's, until the new one is heard
  int start_ = 0;              // the first position the cache holds a pair of
  int pairs_ = 0;              // committed pairs it holds from start_ (drafts' come after)
  DraftDraws draws_;
};

}  // namespace heron::spec
