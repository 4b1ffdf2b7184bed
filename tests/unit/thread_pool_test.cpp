// The kernels' thread pool: every index runs exactly once, from any number of
// threads, including concurrent callers (which run inline) and repeated calls.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "heron/kernels/thread_pool.h"

namespace {

using heron::kernels::ThreadPool;

void expect_each_index_once(ThreadPool& pool, int n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  pool.parallel_for(n, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
  for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int n : {0, 1, 2, 3, 17, 1000}) expect_each_index_once(pool, n);
  }
}

TEST(ThreadPool, SurvivesManySmallJobsAndConcurrentCallers) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 500; ++rep) expect_each_index_once(pool, 1 + rep % 7);
    });
  }
  for (auto& t : callers) t.join();
}

TEST(ThreadPool, SharedPoolIsSizedToTheMachine) {
  EXPECT_GE(ThreadPool::shared().size(), 1);
  EXPECT_EQ(ThreadPool::shared().size(), ThreadPool::default_threads());
}

}  // namespace
