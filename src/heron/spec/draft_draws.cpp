#include "heron/spec/draft_draws.h"

#include <random>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/sample/filter.h"
#include "heron/sample/keyed_random.h"

namespace heron::spec {

namespace mx = mlx::core;

namespace {

constexpr uint64_t kDraftStream = 0x6472616674ULL;  // "draft"
// Position slots per proposal in that stream.
constexpr uint64_t kSlotsPerProposal = uint64_t{1} << 20;

}  // namespace

void DraftDraws::reset(const sample::SamplingOptions& sampling) {
  sampling_ = sampling;
  sampling_.repeat_penalty = 1.0f;
  sampling_.presence_penalty = 0.0f;
  sampling_.frequency_penalty = 0.0f;
  seed_ = (sampling.seed ? *sampling.seed : std::random_device{}()) ^ kDraftStream;
  proposals_ = 0;
}

mx::array DraftDraws::draw(const mx::array& logits) {
  const int vocab = logits.shape(-1);
  auto row = mx::astype(mx::reshape(logits, {1, vocab}), mx::float32);
  auto filtered = sample::filter_rows(row, sampling_, std::nullopt);
  const uint64_t slot = proposals_ * kSlotsPerProposal + tokens_.size();
  auto token = filtered.draw(sample::position_keys(seed_, slot, 1));
  tokens_.push_back(token);
  if (!filtered.greedy) probs_.push_back(filtered.probs());
  return token;
}

Draft DraftDraws::finish() {
  Draft draft;
  ++proposals_;
  if (tokens_.empty()) return draft;
  auto ids = mx::concatenate(tokens_, 0);
  if (!probs_.empty()) draft.probs = mx::concatenate(probs_, 0);
  if (draft.probs) {
    mx::eval(ids, *draft.probs);
  } else {
    mx::eval(ids);
  }
  draft.tokens.assign(ids.data<int32_t>(), ids.data<int32_t>() + ids.size());
  tokens_.clear();
  probs_.clear();
  return draft;
}

}  // namespace heron::spec
