#pragma once
// A smaller model with the target's vocabulary drafts by decoding on its own: N steps,
// each fed the last step's token on the device, so a proposal costs one host
// synchronization. Its KV cache follows the committed stream: before a proposal, what it
// holds past the common prefix with the sequence is rewound and what the target
// committed since is prefilled, so it stays level across rounds, plain steps and
// requests (a new request reuses their common prefix). Drafts are drawn as DraftDraws
// says.
#include <cstdint>
#include <vector>

#include "heron/model/model.h"
#include "heron/spec/draft_draws.h"
#include "heron/spec/drafter.h"

namespace heron::spec {

class DraftModel : public Drafter {
 public:
  // `model` outlives the drafter; both are used on the MLX thread only.
  explicit DraftModel(const model::Model& model);
  void reset(const sample::SamplingOptions& sampling) override;
  void committed(std::span<const int> tokens) override;
  Draft propose(int max) override;

 private:
  // Rewinds and prefills the caches to hold the sequence but its last token.
  void catch_up();

  const model::Model& model_;
  cache::Caches caches_;
  std::vector<int> cached_;    // the tokens the caches hold
  std::vector<int> sequence_;  // the target's committed sequence
  DraftDraws draws_;
};

// Throws heron::Error, naming both sizes, unless `draft` shares `target`'s vocabulary.
void check_draft_vocabulary(const model::ModelConfig& target, const model::ModelConfig& draft,
                            const std::string& draft_name);

}  // namespace heron::spec
