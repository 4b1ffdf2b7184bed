// What continuous batching's forward buys: B sequences, each after its own prompt, decode
// one token each per forward (model/batched_forward.h). Prints, for each B, the median
// milliseconds per forward and the aggregate tokens per second, and the ratio to B = 1.
// Usage: batched_decode_bench MODEL [PROMPT_TOKENS] [STEPS] [ROWS,...] (1,2,4,8,16)
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/model/batched_forward.h"
#include "heron/model/loader.h"

namespace mx = mlx::core;
using heron::model::Batch;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: batched_decode_bench MODEL [PROMPT_TOKENS] [STEPS] [ROWS,...]\n";
    return 2;
  }
  const int prompt = argc > 2 ? std::stoi(argv[2]) : 128;
  const int steps = argc > 3 ? std::stoi(argv[3]) : 30;
  std::vector<int> batch_sizes;
  for (std::stringstream list(argc > 4 ? argv[4] : "1,2,4,8,16"); list.good();) {
    std::string item;
    std::getline(list, item, ',');
    batch_sizes.push_back(std::stoi(item));
  }
  auto loaded = heron::model::load_model(argv[1], {.load_tokenizer = false});
  const auto& model = *loaded.model;
  double single = 0;
  for (const int B : batch_sizes) {
    // Each row its own prompt, prefilled alone.
    std::vector<heron::cache::Caches> caches;
    std::vector<heron::cache::Caches*> rows;
    for (int r = 0; r < B; ++r) {
      caches.push_back(model.make_caches());
      std::vector<int> ids(static_cast<size_t>(prompt));
      for (int i = 0; i < prompt; ++i) ids[static_cast<size_t>(i)] = 100 + (i * 37 + r * 11) % 5000;
      mx::eval(model.forward(Batch::single(ids, 0), caches.back()).logits);
    }
    rows.reserve(caches.size());
    for (auto& c : caches) rows.push_back(&c);
    std::vector<double> ms;
    std::vector<std::vector<int>> tokens(static_cast<size_t>(B), std::vector<int>{1234});
    for (int s = 0; s < steps + 3; ++s) {
      const std::vector<int> offsets(static_cast<size_t>(B), prompt + s);
      const auto start = std::chrono::steady_clock::now();
      auto logits = heron::model::forward_rows(model, Batch::rows(tokens, offsets), rows).logits;
      auto next = mx::argmax(logits, -1);
      mx::eval(next);
      const auto end = std::chrono::steady_clock::now();
      for (int r = 0; r < B; ++r) tokens[static_cast<size_t>(r)] = {next.data<int32_t>()[r]};
      if (s >= 3) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    const double median = ms[ms.size() / 2];
    const double tps = 1000.0 * B / median;
    if (single == 0) single = tps;
    std::cout << "rows " << std::setw(2) << B << ": " << std::fixed << std::setprecision(2)
              << median << " ms/forward, " << std::setprecision(1) << tps << " tokens/s, x"
              << std::setprecision(2) << tps / single << "\n";
  }
  return 0;
}
