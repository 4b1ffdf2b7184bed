#pragma once
// The HTTP server's worker pool: a fixed number of threads, and the next connection goes to
// the worker that became idle last. httplib's own pool wakes the longest-idle worker, so
// under light load every one of its threads takes turns; each keeps what it touched (glibc's
// per-thread cache of freed blocks, its stack pages), and resident memory creeps up until
// all of them have served every kind of request. Last-idle-first keeps the work, and that
// memory, on as few threads as the concurrency needs.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace heron::http {

class LifoThreadPool : public httplib::TaskQueue {
 public:
  explicit LifoThreadPool(size_t threads);
  ~LifoThreadPool() override;
  LifoThreadPool(const LifoThreadPool&) = delete;
  LifoThreadPool& operator=(const LifoThreadPool&) = delete;

  void enqueue(std::function<void()> job) override;
  // Runs the jobs already queued, then joins every worker.
  void shutdown() override;

 private:
  struct Worker {
    std::condition_variable wake;
    std::function<void()> job;  // handed over by enqueue while the worker is idle
    std::thread thread;
  };
  void run(Worker& self);

  std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;                // a stack: back() went idle last
  std::deque<std::function<void()>> queue_;  // jobs waiting while every worker is busy
  bool stopping_ = false;
};

}  // namespace heron::http
