#include "heron/kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#if defined(__linux__)
#include <sched.h>
#endif

namespace heron::kernels {

namespace {

// How long an idle worker spins before sleeping. Short: during decode MLX's
// own threads keep the cores busy between matmuls, and a worker spinning
// through those gaps slowed decoding on 2 cores (200 us: -20% tokens/s). A
// late worker costs little, as the caller never waits for one to wake.
constexpr auto kSpin = std::chrono::microseconds(20);

constexpr uint64_t kOpen = uint64_t{1} << 32;
constexpr uint64_t kInside = kOpen - 1;
constexpr int kGenShift = 33;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(wake_mutex_);
    stop_ = true;
    state_.fetch_add(uint64_t{1} << kGenShift, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::default_threads() {
  if (const char* env = std::getenv("HERON_KERNEL_THREADS"); env != nullptr && *env != '\0') {
    return std::max(1, std::atoi(env));
  }
  int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__linux__)
  // Respect taskset/cpuset limits: more threads than usable cores only contend.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::min(n, std::max(1, CPU_COUNT(&set)));
#endif
  return n;
}

ThreadPool& ThreadPool::shared() {
  // Leaked on purpose: MLX stream threads may still run kernels during static
  // destruction, after a function-local static pool would have been joined.
  static ThreadPool* pool = new ThreadPool(default_threads());
  return *pool;
}

void ThreadPool::work(TaskFn fn, void* ctx, int n) {
  for (int i = next_.fetch_add(1, std::memory_order_relaxed); i < n;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    fn(ctx, i);
  }
}

void ThreadPool::run(int n, TaskFn fn, void* ctx) {
  std::unique_lock busy(run_mutex_, std::try_to_lock);
  if (n <= 1 || workers_.empty() || !busy.owns_lock()) {
    for (int i = 0; i < n; ++i) fn(ctx, i);
    return;
  }
  // Nobody is inside (the previous run waited for that), so the job is ours.
  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  next_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard lk(wake_mutex_);
    const uint64_t gen = (state_.load(std::memory_order_relaxed) >> kGenShift) + 1;
    state_.store(gen << kGenShift | kOpen, std::memory_order_release);
  }
  wake_.notify_all();
  work(fn, ctx, n);
  // All tasks are claimed: let no one else in, then wait for those inside to
  // finish theirs.
  state_.fetch_and(~kOpen, std::memory_order_acq_rel);
  for (int spins = 0; state_.load(std::memory_order_acquire) & kInside; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;  // generation 0 is never a job
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    auto gen_of = [this] { return state_.load(std::memory_order_acquire) >> kGenShift; };
    uint64_t gen = gen_of();
    for (int spins = 0; gen == seen; ++spins) {
      cpu_relax();
      if ((spins & 255) == 255 && std::chrono::steady_clock::now() - start > kSpin) {
        std::unique_lock lk(wake_mutex_);
        wake_.wait(lk, [&] { return gen_of() != seen; });
      }
      gen = gen_of();
    }
    seen = gen;
    if (stop_) return;
    // Join only the job we saw, and only while it is open.
    uint64_t s = state_.load(std::memory_order_acquire);
    bool joined = false;
    while ((s >> kGenShift) == gen && (s & kOpen) && !joined) {
      joined = state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire);
    }
    if (!joined) continue;
    work(fn_, ctx_, n_);
    state_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace heron::kernels
