#pragma once
// The loaded models: one runner process each, started on first use and kept for
// their keep_alive after their last request. A lease pins a runner while a request
// uses it. At most `max_loaded` runners and `max_memory` bytes of models: a model that
// does not fit first unloads the least recently used idle runners, then waits for busy
// ones to finish. A runner that died is replaced on the next acquire.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/server/keep_alive.h"
#include "heron/server/model_resolver.h"
#include "heron/server/runner_process.h"

namespace heron::server {

using Clock = std::chrono::steady_clock;

struct RunnerSlot {
  ResolvedModel model;
  std::mutex start_mu;  // one start at a time per model
  // Guarded by the pool's mutex (a restart replaces them while old leases keep theirs):
  std::shared_ptr<RunnerProcess> process;
  std::shared_ptr<const nlohmann::json> status;  // /status right after start (template, context)
  int active = 0;
  uint64_t bytes = 0;  // estimated from its files, then what the runner reported after load
  KeepAlive keep_alive;
  Clock::time_point last_used;
};

class RunnerPool;

class Lease {
 public:
  Lease(RunnerPool& pool, std::shared_ptr<RunnerSlot> slot, KeepAlive keep_alive,
        double load_seconds);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  const ResolvedModel& model() const { return slot_->model; }
  RunnerProcess& process() { return *process_; }
  const nlohmann::json& status() const { return *status_; }
  double load_seconds() const { return load_seconds_; }  // 0 when it was already loaded

 private:
  RunnerPool& pool_;
  std::shared_ptr<RunnerSlot> slot_;
  std::shared_ptr<RunnerProcess> process_;
  std::shared_ptr<const nlohmann::json> status_;
  KeepAlive keep_alive_;
  double load_seconds_;
};

struct PoolConfig {
  std::filesystem::path exe;  // this binary, run as `heron runner`
  size_t max_loaded = 3;
  uint64_t max_memory = 0;  // bytes of loaded models; 0: no limit
  std::chrono::seconds load_timeout{300};
  int max_queue = 32;  // requests waiting per model before a 503 (the runner's --max-queue)
};

class RunnerPool {
 public:
  explicit RunnerPool(PoolConfig config);
  ~RunnerPool();
  // A running runner for `model`, started if needed; throws http::HttpError.
  std::unique_ptr<Lease> acquire(const ResolvedModel& model, KeepAlive keep_alive);
  // keep_alive 0 without a prompt: unload now if idle (else when its requests end).
  void unload(const ResolvedModel& model);
  // /api/ps: the loaded models.
  nlohmann::json ps();
  // The loaded models with what the pool counts for each and their runners' /status now
  // (null when a runner does not answer), for /metrics.
  struct Loaded {
    std::string name;
    uint64_t bytes;
    nlohmann::json status;
  };
  std::vector<Loaded> loaded();
  // Requests inside acquire: waiting for room, for their runner to start, or starting it.
  int waiting() const { return waiting_.load(); }

 private:
  friend class Lease;
  // /api/ps's entries for the loaded models, and their runners.
  void list_locked(nlohmann::json& models, std::vector<std::shared_ptr<RunnerProcess>>& processes);
  void release(const std::shared_ptr<RunnerSlot>& slot, KeepAlive keep_alive);
  void reap_loop();
  // Unloads idle runners (least recently used first) or waits for busy ones until a
  // model of `bytes` fits; throws http::HttpError when it never will or time runs out.
  void make_room_locked(std::unique_lock<std::mutex>& lock, const ResolvedModel& model,
                        uint64_t bytes);
  bool evict_lru_locked();

  PoolConfig config_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<RunnerSlot>> slots_;  // by model path
  std::atomic<int> waiting_{0};
  std::thread reaper_;
};

}  // namespace heron::server
