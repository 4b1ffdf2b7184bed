#include "heron/spec/draft_model.h"

#include <algorithm>
#include <string>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"

namespace heron::spec {

namespace mx = mlx::core;

DraftModel::DraftModel(const model::Model& model) : model_(model), caches_(model.make_caches()) {}

void DraftModel::reset(const sample::SamplingOptions& sampling) {
  draws_.reset(sampling);
  sequence_.clear();  // the caches keep their tokens: the next request may share a prefix
}

void DraftModel::committed(std::span<const int> tokens) {
  sequence_.insert(sequence_.end(), tokens.begin(), tokens.end());
}

void DraftModel::catch_up() {
  const size_t want = sequence_.size() - 1;
  const size_t common = static_cast<size_t>(
      std::mismatch(cached_.begin(), cached_.end(), sequence_.begin(), sequence_.begin() + want)
          .first -
      cached_.begin());
  if (common < cached_.size()) {
    // A sliding window may no longer hold the state there: then start over.
    const bool holds = std::all_of(caches_.begin(), caches_.end(), [&](const auto& c) {
      return cache::holds_state_at(*c, static_cast<int>(common));
    });
    const size_t keep = holds ? common : 0;
    for (auto& c : caches_) c->rewind(static_cast<int>(cached_.size() - keep));
    cached_.resize(keep);
  }
  if (cached_.size() < want) {
    const size_t from = cached_.size();
    std::vector<int> part(sequence_.begin() + static_cast<std::ptrdiff_t>(from),
                          sequence_.begin() + static_cast<std::ptrdiff_t>(want));
    auto out = model_.forward(
        model::Batch::single(part, static_cast<int>(from), model::LogitsFor::Last), caches_);
    mx::eval(out.logits);
    cached_.insert(cached_.end(), part.begin(), part.end());
  }
}

Draft DraftModel::propose(int max) {
  const int context = model_.config().max_position_embeddings;
  max = std::min<int>(max, context - static_cast<int>(sequence_.size()));
  if (sequence_.empty() || max < 1) return {};
  catch_up();
  int offset = static_cast<int>(cached_.size());
  auto logits =
      model_.forward(model::Batch::single(std::vector<int>{sequence_.back()}, offset), caches_)
          .logits;
  for (int i = 0; i < max; ++i) {
    auto token = draws_.draw(logits);
    if (i + 1 < max) {
      ++offset;
      logits = model_.forward(model::Batch::single(token, offset), caches_).logits;
    }
  }
  Draft draft = draws_.finish();
  // The caches took the last committed token and every draft but the last.
  cached_.push_back(sequence_.back());
  cached_.insert(cached_.end(), draft.tokens.begin(), draft.tokens.end() - 1);
  return draft;
}

void check_draft_vocabulary(const model::ModelConfig& target, const model::ModelConfig& draft,
                            const std::string& draft_name) {
  if (draft.vocab_size != target.vocab_size) {
    throw Error("draft model " + draft_name + " has a vocabulary of " +
                std::to_string(draft.vocab_size) + " tokens, the model it drafts for " +
                std::to_string(target.vocab_size) + ": a draft must share its vocabulary");
  }
}

}  // namespace heron::spec
