#include "heron/spec/head_drafter.h"

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/transforms.h>

namespace heron::spec {

namespace mx = mlx::core;

HeadDrafter::HeadDrafter(const model::PredictionHead& head, int context)
    : head_(head), context_(context), caches_(head.make_caches()) {}

void HeadDrafter::reset(const sample::SamplingOptions& sampling) {
  draws_.reset(sampling);
  // What it holds was computed for this sequence; the next request keeps what it shares.
  previous_ = std::move(sequence_);
  sequence_.clear();
}

void HeadDrafter::committed(std::span<const int> tokens) {
  sequence_.insert(sequence_.end(), tokens.begin(), tokens.end());
  if (previous_.empty()) return;
  const auto common =
      std::mismatch(previous_.begin(), previous_.end(), sequence_.begin(), sequence_.end());
  // A hidden state depends on its position's token and those before it.
  forget_from(static_cast<int>(common.first - previous_.begin()));
  previous_.clear();
}

void HeadDrafter::forget_from(int from) {
  std::erase_if(hiddens_, [&](const Rows& r) { return r.first >= from; });
  if (!hiddens_.empty()) {
    auto& last = hiddens_.back();
    if (last.first + last.rows.shape(1) > from) {
      last.rows = mx::slice(last.rows, {0, 0, 0}, {1, from - last.first, last.rows.shape(2)});
    }
  }
  // Pair t also reads token t + 1.
  pairs_ = std::clamp(from - 1 - start_, 0, pairs_);
}

void HeadDrafter::target_hiddens(int first, const mx::array& hiddens) {
  forget_from(first);
  hiddens_.push_back({first, hiddens});
  // Plain steps bring one position at a time: join the runs now and then, so a long
  // conversation keeps a few arrays rather than one per position.
  if (hiddens_.size() > kRunsBeforeJoining) join_runs();
}

void HeadDrafter::join_runs() {
  std::vector<Rows> joined;
  std::vector<mx::array> parts;  // of the run being joined
  int end = 0;
  auto close = [&] {
    if (parts.size() > 1) joined.back().rows = mx::concatenate(parts, 1);
    parts.clear();
  };
  for (const auto& r : hiddens_) {
    if (joined.empty() || r.first != end) {
      close();
      joined.push_back(r);
    }
    parts.push_back(r.rows);
    end = r.first + r.rows.shape(1);
  }
  close();
  std::vector<mx::array> rows;
  rows.reserve(joined.size());
  for (const auto& r : joined) rows.push_back(r.rows);
  mx::eval(rows);
  hiddens_ = std::move(joined);
}

std::optional<mx::array> HeadDrafter::hiddens(int from, int to) const {
  std::vector<mx::array> parts;
  int at = from;
  for (const auto& r : hiddens_) {
    const int end = r.first + r.rows.shape(1);
    if (at >= to || end <= at) continue;
    if (r.first > at) return std::nullopt;
    const int stop = std::min(end, to);
    parts.push_back(mx::slice(r.rows, {0, at - r.first, 0}, {1, stop - r.first, r.rows.shape(2)}));
    at = stop;
  }
  if (at < to) return std::nullopt;
  return parts.size() == 1 ? parts[0] : mx::concatenate(parts, 1);
}

void HeadDrafter::catch_up() {
  const int last_pair = static_cast<int>(sequence_.size()) - 2;  // run by the proposal
  // Pairs past the committed ones came from the last proposal's drafts.
  auto& cache = *caches_[0];
  if (cache.offset() > pairs_) cache.rewind(cache.offset() - pairs_);
  // The earliest position from which every hidden state up to the last pair is known.
  int known = last_pair + 1;
  for (auto r = hiddens_.rbegin(); r != hiddens_.rend(); ++r) {
    if (r->first + r->rows.shape(1) < known) break;
    known = std::min(known, r->first);
  }
  // Start over from there when what it holds does not run on into it (a gap after its
  // pairs) or it now knows positions before them.
  if (pairs_ == 0 || known > start_ + pairs_ || known < start_) {
    cache.rewind(cache.offset());
    start_ = known;
    pairs_ = 0;
  }
  const int from = start_ + pairs_;
  if (from >= last_pair) return;
  std::vector<int> next(sequence_.begin() + from + 1, sequence_.begin() + last_pair + 1);
  const int n = static_cast<int>(next.size());
  // Only its cache is needed, which the proposal that follows evaluates with its drafts
  // (one evaluation a round; these logits are never computed).
  head_.forward(mx::array(next.data(), {1, n}, mx::int32), *hiddens(from, last_pair), from,
                caches_);
  pairs_ += n;
}

Draft HeadDrafter::propose(int max) {
  const int n = static_cast<int>(sequence_.size());
  max = std::min(max, context_ - n);
  if (n < 2 || max < 1) return {};
  catch_up();
  const auto hidden = hiddens(n - 2, n - 1);
  if (!hidden || start_ + pairs_ != n - 2) return {};
  int offset = n - 2;
  auto out = head_.forward(mx::array({sequence_.back()}, {1, 1}), *hidden, offset, caches_);
  ++pairs_;  // the last committed token and the target's state before it
  for (int i = 0; i < max; ++i) {
    auto token = draws_.draw(out.logits);
    if (i + 1 < max) {
      out = head_.forward(mx::reshape(token, {1, 1}), *out.hiddens, ++offset, caches_);
    }
  }
  return draws_.finish();
}

}  // namespace heron::spec
