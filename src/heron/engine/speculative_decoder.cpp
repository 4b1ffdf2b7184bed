#include "heron/engine/speculative_decoder.h"

#include <algorithm>
#include <limits>

#include <mlx/ops.h>

#include "heron/engine/token_read.h"
#include "heron/sample/filter.h"
#include "heron/sample/keyed_random.h"
#include "heron/sample/penalties.h"
#include "heron/sample/verify.h"

namespace heron::engine {

namespace mx = mlx::core;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The proposal without its first token (which the target just committed).
std::optional<spec::Draft> after_first(spec::Draft draft) {
  if (draft.tokens.size() < 2) return std::nullopt;
  draft.tokens.erase(draft.tokens.begin());
  if (draft.probs) {
    const int n = draft.probs->shape(0);
    draft.probs = mx::slice(*draft.probs, {1, 0}, {n, draft.probs->shape(1)});
  }
  return draft;
}

// The first n tokens of a proposal.
spec::Draft truncated(spec::Draft draft, int n) {
  if (static_cast<int>(draft.tokens.size()) <= n) return draft;
  draft.tokens.resize(static_cast<size_t>(n));
  if (draft.probs) draft.probs = mx::slice(*draft.probs, {0, 0}, {n, draft.probs->shape(1)});
  return draft;
}

}  // namespace

SpeculativeDecoder::SpeculativeDecoder(Sequence& sequence, PlainDecoder& plain,
                                       spec::Drafter& drafter, spec::DepthController& controller)
    : seq_(sequence), plain_(plain), drafter_(drafter), controller_(controller) {}

void SpeculativeDecoder::committed(const std::vector<TokenStep>& steps) {
  std::vector<int> ids;
  ids.reserve(steps.size());
  for (const auto& s : steps) ids.push_back(s.id);
  drafter_.committed(ids);
}

std::vector<TokenStep> SpeculativeDecoder::plain_step(int remaining) {
  const bool pipelined = plain_.in_flight();
  auto steps = plain_.next(remaining);
  const auto now = Clock::now();
  // In steady state a pipelined step costs the time between two of them.
  if (pipelined && last_plain_) {
    controller_.observe_plain(std::chrono::duration<double>(now - *last_plain_).count());
  }
  last_plain_ = plain_.in_flight() ? std::optional(now) : std::nullopt;
  committed(steps);
  return steps;
}

std::vector<TokenStep> SpeculativeDecoder::next(int remaining) {
  if (auto stash = std::exchange(stashed_, std::nullopt); stash && remaining > 1) {
    // Its round was chosen last step, when it drained the pipeline.
    return round(truncated(std::move(*stash), std::min(remaining - 1, seq_.cache.rollback_limit())),
                 stashed_seconds_);
  }
  // A round writes depth + 1 positions and may roll back all but one.
  const int depth = controller_.choose(std::min(remaining - 1, seq_.cache.rollback_limit()));
  if (depth == 0) return plain_step(remaining);
  // While a plain step is in flight the first proposed token guesses it, so a probe
  // from plain decoding still drafts `depth` tokens past it.
  const bool draining = plain_.in_flight();
  const int proposed = draining ? depth + 1 : depth;
  const auto start = Clock::now();
  spec::Draft draft = truncated(drafter_.propose(proposed), proposed);
  // Under a grammar the target could never accept a draft past the first invalid token.
  if (seq_.grammar) {
    const int valid = seq_.grammar->valid_prefix(draft.tokens);
    draft = truncated(std::move(draft), valid);
  }
  const double draft_seconds = seconds_since(start);
  if (draft.empty()) return plain_step(remaining);
  if (draining) {
    // The step in flight commits first; the proposal stays good if it foresaw that token.
    auto steps = plain_.drain();
    last_plain_.reset();
    committed(steps);
    if (steps[0].id == draft.tokens[0]) {
      stashed_ = after_first(std::move(draft));
      stashed_seconds_ = draft_seconds;
    }
    return steps;
  }
  return round(std::move(draft), draft_seconds);
}

std::vector<TokenStep> SpeculativeDecoder::round(spec::Draft draft, double draft_seconds) {
  const auto start = Clock::now();
  auto& sampler = seq_.sampler;
  const int n = static_cast<int>(draft.tokens.size());
  std::vector<int> input{seq_.tokens.back()};
  input.insert(input.end(), draft.tokens.begin(), draft.tokens.end());
  auto& caches = seq_.cache.caches();
  const int first = seq_.offset();
  auto out =
      seq_.model.forward(model::Batch::single(input, first), caches, seq_.hidden_reader != nullptr);
  const auto& logits = out.logits;
  const int vocab = logits.shape(-1);
  auto raw = mx::reshape(logits, {n + 1, vocab});
  const auto& options = sampler.options();
  auto scores = mx::astype(raw, mx::float32);
  if (seq_.grammar) {  // each position masked as plain decoding would mask it
    scores = mx::where(seq_.grammar->allowed_along(draft.tokens), scores,
                       mx::array(-std::numeric_limits<float>::infinity()));
  }
  auto target = sample::filter_rows(
      std::move(scores), options,
      sample::penalty_windows(seq_.tokens, draft.tokens, n + 1, options, vocab));
  std::optional<mx::array> q;
  if (draft.probs) q = mx::expand_dims(*draft.probs, 0);
  auto verdict = sample::verify(target, mx::array(draft.tokens.data(), {1, n}, mx::int32), q,
                                sample::position_keys(sampler.seed(), sampler.position(), n + 1));
  auto tokens = mx::reshape(verdict.tokens, {n + 1});
  auto accepted_count = mx::reshape(verdict.accepted, {});
  std::optional<sample::TokenLogprobs> logprobs;
  if (sampler.logprob_options().enabled) {
    logprobs = sample::compute_logprobs(raw, tokens, sampler.logprob_options().top);
  }
  const TokenRows rows(tokens, logprobs, {accepted_count});
  const int accepted = accepted_count.item<int32_t>();

  // The caches took the current token and every draft; keep what was accepted.
  for (auto& c : caches) c->rewind(n - accepted);
  if (seq_.hidden_reader) {  // the positions whose inputs are now committed
    const auto& h = *out.hiddens;
    seq_.hidden_reader->target_hiddens(first,
                                       mx::slice(h, {0, 0, 0}, {1, accepted + 1, h.shape(2)}));
  }
  seq_.cache.append(std::span(input.data(), static_cast<size_t>(accepted) + 1));
  std::vector<TokenStep> steps;
  for (int r = 0; r <= accepted; ++r) {
    steps.push_back(rows[r]);
    seq_.tokens.push_back(steps.back().id);
    if (seq_.grammar) steps.back().completes = seq_.grammar->accept(steps.back().id);
  }
  sampler.set_position(sampler.position() + static_cast<uint64_t>(accepted) + 1);
  sampler.set_history(seq_.tokens);
  committed(steps);
  controller_.observe_round(n, accepted, draft_seconds, seconds_since(start));
  ++stats_.rounds;
  stats_.drafted += n;
  stats_.accepted += accepted;
  return steps;
}

}  // namespace heron::engine
