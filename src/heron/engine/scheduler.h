#pragma once
// Continuous batching's decode loop: the sequences of many requests run as the rows of
// one forward per step (model/batched_forward.h). A request joins between steps; a long
// prompt is prefilled in chunks beside the rows that decode, so no stream stalls for a
// whole prefill; a row that finishes, stops or is cancelled leaves without disturbing the
// others. Each row keeps its own options, sampler slot (seeded draws do not depend on
// the batch mates), budget, grammar and caches. Runs on the MLX thread.
//
// Not yet here (issue 24): the prefix cache (rows start from an empty cache and leave
// nothing in the trie) and speculation; the runner still decodes through generate().
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "heron/core/error.h"
#include "heron/engine/generator.h"
#include "heron/sample/slot_sampler.h"

namespace heron::engine {

struct RowRequest {
  std::vector<int> prompt;
  GenerateOptions options;  // options.speculate is ignored
  std::function<Next(const TokenStep&)> on_token;
  // Once, when the row leaves: on_done, or on_error when it failed (a forward that failed
  // fails every row of its batch; a callback or grammar that failed, its own row).
  std::function<void(const GenerateStats&)> on_done;
  std::function<void(const std::exception&)> on_error;
};

// A row's caches are accounted before it is admitted: it reserves `per_token` bytes for
// each token it may hold (its prompt and budget), and the rows' reservations stay within
// `budget` (0: unbounded). A request that cannot fit even alone fails with NoRoom.
struct RowMemory {
  size_t budget = 0;
  size_t per_token = 0;
};

class NoRoom : public Error {
 public:
  using Error::Error;
};

class Scheduler {
 public:
  // max_rows: rows per forward; prefill_budget: prompt tokens per step, over all rows.
  Scheduler(const model::Model& model, int max_rows, int prefill_budget = 512,
            RowMemory memory = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Joins at the next step, or waits for a free row. Throws heron::Error for an empty
  // prompt or one that does not fit the context (options.context_length).
  void add(RowRequest request);
  int rows() const { return static_cast<int>(rows_.size()); }
  int waiting() const { return static_cast<int>(waiting_.size()); }
  bool idle() const { return rows_.empty() && waiting_.empty(); }
  // One forward over every row: prefilling rows their next chunk, decoding rows their
  // last token, whose logits give their next. Calls on_token, on_done and on_error;
  // throws nothing.
  void step();

 private:
  struct Row;
  void admit();
  // Takes a row out of the batch, with its memory reservation and sampler slot.
  std::unique_ptr<Row> remove(Row* row);
  void leave(Row* row, const char* reason);
  void fail(Row* row, const std::exception& error);
  // The row's drawn token joins it; returns why the row ends, or null.
  const char* commit(Row& row, const TokenStep& step);
  void batch_step();

  const model::Model& model_;
  int max_rows_;
  int prefill_budget_;
  RowMemory memory_;
  size_t reserved_ = 0;  // bytes the admitted rows reserved
  sample::SlotSampler sampler_;
  std::vector<std::unique_ptr<Row>> rows_;
  std::vector<RowRequest> waiting_;
};

}  // namespace heron::engine
