#pragma once
// A small persistent thread pool for CPU kernels: a matmul is tens of
// microseconds during decode, so threads are created once and spin briefly
// between calls instead of being started (or woken from sleep) per call.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace heron::kernels {

class ThreadPool {
 public:
  // n_threads counts the calling thread: n_threads - 1 workers are started.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool: HERON_KERNEL_THREADS threads when set, else
  // std::thread::hardware_concurrency() capped by the CPU affinity mask.
  static ThreadPool& shared();
  // Threads the shared pool is created with.
  static int default_threads();

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs f(i) for every i in [0, n) on the pool and the calling thread, and
  // returns once all are done. Concurrent callers (another MLX stream thread)
  // do not share the pool: the second one runs its tasks inline.
  template <class F>
  void parallel_for(int n, F&& f) {
    run(
        n, [](void* ctx, int i) { (*static_cast<F*>(ctx))(i); }, &f);
  }

 private:
  using TaskFn = void (*)(void*, int);
  void run(int n, TaskFn fn, void* ctx);
  void work(TaskFn fn, void* ctx, int n);
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one parallel_for at a time
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  // generation << 33 | open << 32 | workers inside the job. Workers join only
  // while the job is open, so the caller never waits for a worker that was
  // asleep or descheduled: it closes the job once all tasks are claimed and
  // waits just for those inside.
  std::atomic<uint64_t> state_{0};
  std::atomic<int> next_{0};
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  bool stop_ = false;
};

}  // namespace heron::kernels
