#include "heron/http/lifo_thread_pool.h"

namespace heron::http {

LifoThreadPool::LifoThreadPool(size_t threads) {
  std::lock_guard lock(mu_);  // workers wait for the lock until every one is made
  for (size_t i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    Worker& w = *workers_.back();
    w.thread = std::thread([this, &w] { run(w); });
  }
}

LifoThreadPool::~LifoThreadPool() {
  shutdown();
}

void LifoThreadPool::enqueue(std::function<void()> job) {
  std::lock_guard lock(mu_);
  if (idle_.empty()) {
    queue_.push_back(std::move(job));
    return;
  }
  Worker* w = idle_.back();
  idle_.pop_back();
  w->job = std::move(job);
  w->wake.notify_one();
}

void LifoThreadPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (Worker* w : idle_) w->wake.notify_one();
  }
  for (auto& w : workers_) w->thread.join();
}

void LifoThreadPool::run(Worker& self) {
  std::unique_lock lock(mu_);
  for (;;) {
    std::function<void()> job;
    if (!queue_.empty()) {
      job = std::move(queue_.front());
      queue_.pop_front();
    } else if (stopping_) {
      return;
    } else {
      idle_.push_back(&self);
      self.wake.wait(lock, [&] { return self.job || stopping_; });
      if (!self.job) {  // stopping: enqueue can no longer pick this worker
        std::erase(idle_, &self);
        continue;
      }
      job = std::move(self.job);
      self.job = nullptr;
    }
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace heron::http
