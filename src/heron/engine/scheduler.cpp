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
    const int budget = token_budget(model_, n, next.options);
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

std::unique_ptr<Scheduler::Row> Scheduler::remove(Row* row) {
  const auto it =
      std::find_if(rows_.begin(), rows_.end(), [row](const auto& r) { return r.get() == row; });
  auto removed = std::move(*it);
  rows_.erase(it);
  reserved_ -= removed->reserved;
  sampler_.remove(removed->slot);
  return removed;
}

void Scheduler::leave(Row* row, const char* reason) {
  auto left = remove(row);
  left->stats.done_reason = reason;
  if (left->stats.decode_tokens > 0) left->stats.decode_seconds = seconds_since(left->decode_start);
  if (left->request.on_done) left->request.on_done(left->stats);
}

void Scheduler::fail(Row* row, const std::exception& error) {
  auto failed = remove(row);
  if (failed->request.on_error) failed->request.on_error(error);
}

const char* Scheduler::commit(Row& row, const TokenStep& step) {
  TokenStep token = step;
  row.tokens.push_back(token.id);
  if (row.stats.decode_tokens++ == 0) {
    row.stats.prompt_seconds = seconds_since(row.start);
    row.decode_start = Clock::now();
  }
  if (row.grammar) token.completes = row.grammar->accept(token.id);
  if (const char* reason = end_reason(model_, row.request.options, token, row.request.on_token)) {
    return reason;
  }
  return row.stats.decode_tokens >= row.budget ? "length" : nullptr;
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
    if (cancelled && cancelled()) leave(rows_[i].get(), "cancelled");
  }
  // Each row's input: a prompt's next chunk (within the step's prefill budget), or the
  // token it drew last. A row whose input reaches the end of its tokens draws its next.
  std::vector<std::vector<int>> inputs;
  std::vector<int> offsets;
  std::vector<cache::Caches*> caches;
  std::vector<Row*> in_batch, drawing;
  std::vector<int> at;  // the drawing rows' places in the batch
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
    if (row->cached == total) {
      at.push_back(static_cast<int>(in_batch.size()) - 1);
      drawing.push_back(row.get());
    }
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
  std::vector<int> slots;
  std::vector<std::optional<mx::array>> allowed;
  for (Row* row : drawing) {
    slots.push_back(row->slot);
    allowed.push_back(row->grammar ? std::optional(row->grammar->allowed()) : std::nullopt);
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
  for (const auto& [row, reason] : finished) leave(row, reason);
}

}  // namespace heron::engine
