#pragma once
// The runner's model: loaded, run and freed on one MLX thread. HTTP threads tokenize
// (the tokenizer is thread-safe) and submit jobs, which run one at a time in arrival
// order, or with HERON_NUM_PARALLEL above 1 as the rows of one batch (engine::Scheduler;
// its rows use neither the prefix cache nor speculation yet); the queue is bounded so a
// flood is refused instead of piling up.
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "heron/cache/prefix_cache.h"
#include "heron/core/worker.h"
#include "heron/engine/scheduler.h"
#include "heron/model/loader.h"
#include "heron/runner/completion_job.h"
#include "heron/runner/draft_setup.h"
#include "heron/runner/output_grammars.h"
#include "heron/runner/scripted_output.h"
#include "heron/spec/depth_controller.h"

namespace heron::runner {

// The prefix cache's settings (HERON_CACHE_MEMORY, HERON_CACHE_DIR, HERON_CACHE_DISK).
struct CacheSettings {
  std::optional<size_t> memory;              // bytes of inactive snapshots; unset: derived at load
  std::optional<std::filesystem::path> dir;  // the disk tier, when set
  size_t disk = 0;                           // bytes the disk tier may hold
};

// Speculative decoding (HERON_SPECULATION) and where its costs persist.
struct SpeculationSettings {
  bool enabled = true;
  std::optional<std::filesystem::path> store_root;  // the model store; unset: not persisted
};

class ModelHost {
 public:
  // default_context: num_ctx when a request gives none (capped at the trained length).
  // num_parallel: requests decoded together (HERON_NUM_PARALLEL); 1 runs one at a time.
  ModelHost(std::filesystem::path path, int max_queue, int default_context,
            CacheSettings cache_settings, SpeculationSettings speculation = {},
            int num_parallel = 1);
  ~ModelHost();
  void load();  // blocks; throws heron::Error when the model cannot be loaded

  const tokenizer::Tokenizer& tokenizer() const { return *loaded_.tokenizer; }
  int vocab_size() const;
  // Structured outputs' grammars for this model (after load()).
  OutputGrammars& output_grammars() const { return *grammars_; }
  // The context a request asking for `requested` tokens (0: the default) gets.
  int context_length(int requested) const;
  // False when the queue is full.
  bool submit(std::shared_ptr<CompletionJob> job);
  // Refreshed by the MLX thread; never waits for it.
  nlohmann::json status() const;

 private:
  void run(CompletionJob& job);  // ends with finish()
  // Batching: joins the jobs that arrived to the scheduler and steps it until it is idle.
  void pump();
  void join(const std::shared_ptr<CompletionJob>& job);
  // Frees the job's queue place, then sends its last event (Done or Error).
  void finish(CompletionJob& job, CompletionEvent last);
  void done(CompletionJob& job, engine::GenerateStats stats);
  // 400 for what the request did (heron::Error), 503 when its caches cannot fit, else 500.
  void fail(CompletionJob& job, const std::exception& error);
  void refresh_status(const char* state);
  void save_costs();

  std::filesystem::path path_;
  int max_queue_;
  int default_context_;
  model::LoadedModel loaded_;
  CacheSettings cache_settings_;
  std::unique_ptr<cache::PrefixCache> cache_;  // every conversation, on the MLX thread
  SpeculationSettings speculation_;
  std::optional<LoadedDraft> draft_;  // its stored draft model, when it has one
  std::optional<Drafters> drafters_;  // when speculating
  spec::DepthController controller_;  // its tables belong to the model and machine
  std::optional<std::filesystem::path> costs_file_;
  std::atomic<int> queued_{0};   // accepted and not finished
  std::atomic<int> waiting_{0};  // accepted and not started: /status's "waiting"
  mutable std::mutex status_mu_;
  nlohmann::json status_;
  std::unique_ptr<OutputGrammars> grammars_;
  nlohmann::json chat_format_;  // chat::ChatFormat of the tokenizer, for /status
  // Tests only (runner/scripted_output.h): the text every completion emits.
  std::optional<std::filesystem::path> scripted_output_ = scripted_output_from_env();
  int num_parallel_ = 1;
  std::unique_ptr<engine::Scheduler> scheduler_;  // when batching
  std::mutex arrivals_mu_;
  std::vector<std::shared_ptr<CompletionJob>> arrivals_;  // for the scheduler, not joined yet
  Worker worker_;  // last member: destroyed first, so no job outlives the model
};

}  // namespace heron::runner
