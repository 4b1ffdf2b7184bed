// The server's worker pool: every job runs, jobs wait while all workers are busy, shutdown
// drains the queue, and a lone client's requests keep landing on the same worker (httplib's
// pool, waking the longest-idle thread, spreads them over all of its threads).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "heron/http/lifo_thread_pool.h"

namespace {

using heron::http::LifoThreadPool;

TEST(LifoThreadPool, RunsEveryJobAndDrainsOnShutdown) {
  std::atomic<int> done{0};
  {
    LifoThreadPool pool(3);
    for (int i = 0; i < 50; ++i) {
      pool.enqueue([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++done;
      });
    }
    pool.shutdown();
    EXPECT_EQ(done.load(), 50);
  }
  EXPECT_EQ(done.load(), 50);
}

TEST(LifoThreadPool, BusyWorkersQueueTheRest) {
  LifoThreadPool pool(2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 4; ++i) {
    pool.enqueue([&, gate] {
      ++started;
      gate.wait();
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(started.load(), 2);  // two workers, two jobs waiting
  release.set_value();
  pool.shutdown();
  EXPECT_EQ(started.load(), 4);
}

TEST(LifoThreadPool, SequentialJobsReuseTheLastIdleWorker) {
  LifoThreadPool pool(8);
  std::set<std::thread::id> used;
  for (int i = 0; i < 10; ++i) {
    std::promise<std::thread::id> ran;
    pool.enqueue([&] { ran.set_value(std::this_thread::get_id()); });
    used.insert(ran.get_future().get());
    // Let the worker return to the idle stack before the next job comes.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_LE(used.size(), 2u) << "the jobs were spread over " << used.size() << " workers";
}

}  // namespace
