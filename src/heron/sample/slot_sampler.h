#pragma once
// Sampling for a batch of sequences (continuous batching): each sequence registers as a
// slot with its own options, penalty history and seed, and one call samples any subset
// of the slots from their rows of logits. Slots whose filters are the same share one
// pass over their rows; each slot draws with its own key per generated position, so it
// draws exactly what its own Sampler would, whoever its batch mates are.
#include <map>
#include <optional>
#include <vector>

#include <mlx/array.h>

#include "heron/sample/sampler.h"

namespace heron::sample {

class SlotSampler {
 public:
  // `history`: the slot's context so far (its prompt), for the penalties. Returns its id.
  int add(const SamplingOptions& options, const LogprobOptions& logprobs,
          const std::vector<int>& history);
  void remove(int slot);
  Sampler& slot(int id);
  int size() const { return static_cast<int>(slots_.size()); }

  // logits [n, V] (or [n, 1, V]): row i for slots[i], each slot at most once. allowed,
  // when given, has one entry per row: a grammar's mask bool [1, V], or none. One Draw
  // per row, token int32 [1], lazy.
  std::vector<Draw> sample(const mlx::core::array& logits, const std::vector<int>& slots,
                           const std::vector<std::optional<mlx::core::array>>& allowed = {});

 private:
  std::map<int, Sampler> slots_;
  int next_ = 0;
};

}  // namespace heron::sample
