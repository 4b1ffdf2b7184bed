#include "heron/sample/slot_sampler.h"

#include <algorithm>
#include <limits>
#include <set>

#include <mlx/ops.h>

#include "heron/core/error.h"
#include "heron/sample/filter.h"
#include "heron/sample/keyed_random.h"

namespace heron::sample {

namespace mx = mlx::core;

namespace {

// Whether two slots' rows may go through one pass of the filters (the seed is per row).
bool same_filters(const SamplingOptions& a, const SamplingOptions& b) {
  return a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p &&
         a.min_p == b.min_p && a.repeat_penalty == b.repeat_penalty &&
         a.repeat_last_n == b.repeat_last_n && a.presence_penalty == b.presence_penalty &&
         a.frequency_penalty == b.frequency_penalty;
}

// The rows' penalty windows, int32 [rows, n], each padded with `vocab`; none when no row
// has a history yet.
std::optional<mx::array> stacked_windows(const std::vector<const Sampler*>& rows, int vocab) {
  int width = 0;
  for (const auto* s : rows) {
    if (s->penalty_window()) width = std::max(width, s->penalty_window()->shape(1));
  }
  if (width == 0) return std::nullopt;
  std::vector<mx::array> padded;
  for (const auto* s : rows) {
    const auto& w = s->penalty_window();
    const int n = w ? w->shape(1) : 0;
    auto pad = mx::full({1, width - n}, vocab, mx::int32);
    padded.push_back(w ? (n == width ? *w : mx::concatenate({*w, pad}, 1)) : pad);
  }
  return mx::concatenate(padded, 0);
}

}  // namespace

int SlotSampler::add(const SamplingOptions& options, const LogprobOptions& logprobs,
                     const std::vector<int>& history) {
  const int id = next_++;
  auto& sampler = slots_.try_emplace(id, options, logprobs).first->second;
  sampler.set_history(history);
  return id;
}

void SlotSampler::remove(int slot) {
  slots_.erase(slot);
}

Sampler& SlotSampler::slot(int id) {
  auto it = slots_.find(id);
  if (it == slots_.end()) throw Error("no sampler slot " + std::to_string(id));
  return it->second;
}

std::vector<Draw> SlotSampler::sample(const mx::array& logits, const std::vector<int>& slots,
                                      const std::vector<std::optional<mx::array>>& allowed) {
  const int n = static_cast<int>(slots.size());
  const int vocab = logits.shape(-1);
  if (logits.size() != static_cast<size_t>(n) * static_cast<size_t>(vocab)) {
    throw Error("sampling " + std::to_string(n) + " slots needs one row of logits for each");
  }
  if (!allowed.empty() && allowed.size() != slots.size()) {
    throw Error("sampling needs one grammar mask entry per slot, or none");
  }
  const auto raw = mx::reshape(logits, {n, vocab});
  auto scores = mx::astype(raw, mx::float32);
  bool masked = false;
  for (const auto& a : allowed) masked = masked || a.has_value();
  if (masked) {
    std::vector<mx::array> masks;
    masks.reserve(allowed.size());
    for (const auto& a : allowed) masks.push_back(a ? *a : mx::full({1, vocab}, true));
    scores = mx::where(mx::concatenate(masks, 0), scores,
                       mx::array(-std::numeric_limits<float>::infinity()));
  }
  if (std::set<int>(slots.begin(), slots.end()).size() != slots.size()) {
    throw Error("a slot may be sampled once per call");
  }
  std::vector<Sampler*> samplers;
  samplers.reserve(slots.size());
  for (int id : slots) samplers.push_back(&slot(id));

  // Rows whose filters are the same, in order of their first row.
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < n; ++r) {
    const auto& options = samplers[static_cast<size_t>(r)]->options();
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return same_filters(samplers[static_cast<size_t>(g[0])]->options(), options);
    });
    if (it == groups.end()) {
      groups.push_back({r});
    } else {
      it->push_back(r);
    }
  }
  std::vector<Draw> out(slots.size(), Draw{mx::array(0), std::nullopt});
  for (const auto& group : groups) {
    const auto g = static_cast<int>(group.size());
    std::vector<const Sampler*> members;
    std::vector<mx::array> keys;
    for (int r : group) {
      const auto* s = samplers[static_cast<size_t>(r)];
      members.push_back(s);
      keys.push_back(position_keys(s->seed(), s->position(), 1));
    }
    const auto rows =
        g == n ? scores : mx::take(scores, mx::array(group.data(), {g}, mx::int32), 0);
    const auto& options = members[0]->options();
    std::optional<mx::array> windows;
    if (options.penalties_active()) windows = stacked_windows(members, vocab);
    const auto tokens = filter_rows(rows, options, windows).draw(mx::concatenate(keys, 0));
    for (int j = 0; j < g; ++j) {
      const int r = group[static_cast<size_t>(j)];
      auto& sampler = *samplers[static_cast<size_t>(r)];
      auto token = g == 1 ? tokens : mx::slice(tokens, {j}, {j + 1});
      sampler.drew(token);
      auto& draw = out[static_cast<size_t>(r)];
      draw.token = token;
      if (sampler.logprob_options().enabled) {
        draw.logprobs = compute_logprobs(mx::slice(raw, {r, 0}, {r + 1, vocab}), token,
                                         sampler.logprob_options().top);
      }
    }
  }
  return out;
}

}  // namespace heron::sample
