#include "heron/engine/scheduler.h"

#include <algorithm>
#include <chrono>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/engine/token_read.h"
#include "heron/model/batched_forward.h"
#include "heron/sample/grammar_mask.h"

namespace heron::engine {

namespace mx = mlx::core;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

struct Scheduler::Row {
  RowRequest request;
  cache::Caches caches;
  int slot = 0;
  std::vector<int> tokens;  // the prompt, then every committed token
  int cached = 0;           // positions the caches hold
  int budget = 0;           // tokens it may generate
  std::optional<sample::GrammarMask> grammar;
  size_t reserved = 0;  // bytes of cache it may take
  GenerateStats stats;
  Clock::time_point start, decode_start;
};

Scheduler::Scheduler(const model::Model& model, int max_rows, int prefill_budget, RowMemory memory)
    : model_(model),
      max_rows_(std::max(1, max_rows)),
      prefill_budget_(std::max(1, prefill_budget)),
      memory_(memory) {}

Scheduler::~Scheduler() = default;

void Scheduler::add(RowRequest request) {
  const int n = static_cast<int>(request.prompt.size());
  check_prompt(n, effective_context(model_, request.options.context_length));
  waiting_.push_back(std::move(request));
}

void Scheduler::admit() {
  while (!waiting_.empty() && static_cast<int>(rows_.size()) < max_rows_) {
    const auto& next = waiting_.front();
    const int n = static_cast<int>(next.prompt.size());
    const int room = effective_context(model_, next.options.context_length) - n;
    const int budget = next.options.max_tokens < 0 ? room : std::min(next.options.max_tokens, room);
    const size_t need = memory_.per_token * static_cast<size_t>(n + std::max(0, budget));
    if (memory_.budget > 0 && budget > 0 && reserved_ + need > memory_.budget) {
      if (need <= memory_.budget) return;  // it waits for rows to leave
      auto request = std::move(waiting_.front());
      waiting_.erase(waiting_.begin());
      if (request.on_error) {
        request.on_error(NoRoom("the request's caches would take " + std::to_string(need >> 20) +
                                " MiB (" + std::to_string(n) + " prompt tokens and up to " +
                                std::to_string(budget) + " more), more than the " +
                                std::to_string(memory_.budget >> 20) +
                                " MiB batched rows may use; shorten the prompt, num_predict "
                                "or num_ctx"));
      }
      continue;
    }
    auto row = std::make_unique<Row>();
    row->request = std::move(waiting_.front());
    waiting_.erase(waiting_.begin());
    const auto& options = row->request.options;
    const auto& prompt = row->request.prompt;
    row->budget = budget;
    if (row->budget <= 0) {  // nothing to generate: done before it starts
      if (row->request.on_done) row->request.on_done({.prompt_tokens = n, .done_reason = "length"});
      continue;
    }
    row->reserved = memory_.budget > 0 ? need : 0;
    reserved_ += row->reserved;
    row->caches = model_.make_caches();
    row->slot = sampler_.add(options.sampling, options.logprobs, prompt);
    row->tokens = prompt;
    if (options.grammar) row->grammar.emplace(*options.grammar, model_.config().vocab_size);
    row->stats.prompt_tokens = n;
    row->start = Clock::now();
    rows_.push_back(std::move(row));
  }
}

void Scheduler::leave(size_t index, const char* reason) {
  auto row = std::move(rows_[index]);
  rows_.erase(rows_.begin() + static_cast<std::ptrdiff_t>(index));
  reserved_ -= row->reserved;
  sampler_.remove(row->slot);
  row->stats.done_reason = reason;
  if (row->stats.decode_tokens > 0) row->stats.decode_seconds = seconds_since(row->decode_start);
  if (row->request.on_done) row->request.on_done(row->stats);
}

const char* Scheduler::commit(Row& row, TokenStep token) {
  row.tokens.push_back(token.id);
  if (row.stats.decode_tokens++ == 0) {
    row.stats.prompt_seconds = seconds_since(row.start);
    row.decode_start = Clock::now();
  }
  if (row.grammar) token.completes = row.grammar->accept(token.id);
  const auto& eos = model_.config().eos_token_ids;
  if (!row.request.options.ignore_eos && std::find(eos.begin(), eos.end(), token.id) != eos.end()) {
    return "stop";
  }
  const Next what = row.request.on_token ? row.request.on_token(token) : Next::Continue;
  if (what != Next::Continue) return what == Next::Stop ? "stop" : "cancelled";
  if (token.completes) return "stop";  // the value is whole: nothing may follow
  if (row.stats.decode_tokens >= row.budget) return "length";
  return nullptr;
}

void Scheduler::fail(Row* row, const std::exception& error) {
  const auto it =
      std::find_if(rows_.begin(), rows_.end(), [row](const auto& r) { return r.get() == row; });
  auto failed = std::move(*it);
  rows_.erase(it);
  reserved_ -= failed->reserved;
  sampler_.remove(failed->slot);
  if (failed->request.on_error) failed->request.on_error(error);
}

void Scheduler::step() {
  try {
    batch_step();
  } catch (const std::exception& e) {
    // The caches may hold writes that were never evaluated: no row can go on.
    while (!rows_.empty()) fail(rows_.back().get(), e);
  }
}

void Scheduler::batch_step() {
  admit();
  for (size_t i = rows_.size(); i-- > 0;) {
    const auto& cancelled = rows_[i]->request.options.cancelled;
    if (cancelled && cancelled()) leave(i, "cancelled");
  }
  // Each row's input: a prompt's next chunk (within the step's prefill budget), or the
  // token it drew last. A row whose input reaches the end of its tokens draws its next.
  std::vector<std::vector<int>> inputs;
  std::vector<int> offsets;
  std::vector<cache::Caches*> caches;
  std::vector<Row*> in_batch, drawing;
  int prefill = prefill_budget_;
  for (auto& row : rows_) {
    const int total = static_cast<int>(row->tokens.size());
    int count = total - row->cached;
    if (count > 1) {  // prefilling
      if (prefill <= 0) continue;
      count = std::min({count, prefill, std::max(1, row->request.options.prefill_chunk)});
      prefill -= count;
    }
    const auto from = row->tokens.begin() + row->cached;
    inputs.emplace_back(from, from + count);
    offsets.push_back(row->cached);
    caches.push_back(&row->caches);
    in_batch.push_back(row.get());
    row->cached += count;
    if (row->cached == total) drawing.push_back(row.get());
  }
  if (in_batch.empty()) return;
  auto logits = model::forward_rows(
                    model_, model::Batch::rows(inputs, offsets, model::LogitsFor::Last), caches)
                    .logits;
  if (drawing.empty()) {
    mx::eval(logits);
    return;
  }
  // The drawing rows' logits, one row each, sampled in one call.
  const int vocab = logits.shape(-1);
  logits = mx::reshape(logits, {static_cast<int>(in_batch.size()), vocab});
  std::vector<int> at, slots;
  std::vector<std::optional<mx::array>> allowed;
  for (size_t j = 0; j < in_batch.size(); ++j) {
    if (std::find(drawing.begin(), drawing.end(), in_batch[j]) == drawing.end()) continue;
    at.push_back(static_cast<int>(j));
    slots.push_back(in_batch[j]->slot);
    auto& grammar = in_batch[j]->grammar;
    allowed.push_back(grammar ? std::optional(grammar->allowed()) : std::nullopt);
  }
  if (at.size() < in_batch.size()) {
    logits = mx::take(logits, mx::array(at.data(), {static_cast<int>(at.size())}, mx::int32), 0);
  }
  auto draws = sampler_.sample(logits, slots, allowed);
  std::vector<mx::array> outs;
  for (const auto& d : draws) {
    outs.push_back(d.token);
    if (d.logprobs) append_logprob_arrays(*d.logprobs, outs);
  }
  mx::eval(outs);

  std::vector<std::pair<Row*, const char*>> finished;
  for (size_t k = 0; k < drawing.size(); ++k) {
    Row& row = *drawing[k];
    const TokenStep token = TokenRows(draws[k].token, draws[k].logprobs)[0];
    try {
      if (const char* reason = commit(row, token)) finished.emplace_back(&row, reason);
    } catch (const std::exception& e) {
      fail(&row, e);
    }
  }
  for (const auto& [row, reason] : finished) {
    const auto it = std::find_if(rows_.begin(), rows_.end(),
                                 [row = row](const auto& r) { return r.get() == row; });
    leave(static_cast<size_t>(it - rows_.begin()), reason);
  }
}

}  // namespace heron::engine
