#pragma once
// Shared by the kernel micro benchmarks.
#include <chrono>
#include <functional>
#include <vector>

#include <mlx/mlx.h>

namespace heron::bench {

// Seconds per call: repeat until about 0.3 s have passed (at least once), after one
// warm-up. `batch` independent calls share one eval, so that for small shapes the
// eval round trip does not hide the kernel.
inline double time_per_call(const std::function<mlx::core::array()>& f, int batch = 1) {
  auto run = [&] {
    std::vector<mlx::core::array> outs;
    for (int i = 0; i < batch; ++i) outs.push_back(f());
    mlx::core::eval(outs);
  };
  run();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  int calls = 0;
  double elapsed = 0.0;
  do {
    run();
    calls += batch;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < 0.3);
  return elapsed / calls;
}

}  // namespace heron::bench
