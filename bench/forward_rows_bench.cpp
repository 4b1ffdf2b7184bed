// What one forward of a few positions costs after a prompt: the price of verifying
// speculative drafts (L = 1 is a plain decode step). Prints the median milliseconds per
// forward for each L, with and without the final hidden states a draft head reads.
// Usage: forward_rows_bench MODEL [PROMPT_TOKENS] [REPEATS] [POSITIONS,...] (1,2,3,5,9)
#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/model/loader.h"

namespace mx = mlx::core;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: forward_rows_bench MODEL [PROMPT_TOKENS] [REPEATS] [POSITIONS,...]\n";
    return 2;
  }
  const int prompt = argc > 2 ? std::stoi(argv[2]) : 128;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 30;
  std::vector<int> positions;
  for (std::stringstream list(argc > 4 ? argv[4] : "1,2,3,5,9"); list.good();) {
    std::string item;
    std::getline(list, item, ',');
    positions.push_back(std::stoi(item));
  }
  auto loaded = heron::model::load_model(argv[1], {.load_tokenizer = false});
  const auto& model = *loaded.model;
  auto caches = model.make_caches();
  std::vector<int> ids(static_cast<size_t>(prompt));
  for (int i = 0; i < prompt; ++i) ids[static_cast<size_t>(i)] = 100 + (i * 37) % 5000;
  mx::eval(model.forward(heron::model::Batch::single(ids, 0), caches).logits);
  for (const bool hiddens : {false, true}) {
    for (const int rows : positions) {
      std::vector<double> ms;
      const std::vector<int> input(static_cast<size_t>(rows), 1234);
      for (int r = 0; r < repeats + 3; ++r) {
        const auto start = std::chrono::steady_clock::now();
        auto out = model.forward(heron::model::Batch::single(input, prompt), caches, hiddens);
        if (hiddens) {
          mx::eval(out.logits, *out.hiddens);
        } else {
          mx::eval(out.logits);
        }
        const auto end = std::chrono::steady_clock::now();
        for (auto& c : caches) c->rewind(rows);
        if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
      }
      std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
      std::cout << "positions " << rows << (hiddens ? " with hiddens" : "") << ": "
                << ms[ms.size() / 2] << " ms\n";
    }
  }
  return 0;
}
