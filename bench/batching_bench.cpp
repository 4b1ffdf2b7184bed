// Continuous batching through engine::Scheduler: S streams, each its own prompt, arrive
// together and decode greedily. Prints for each S the aggregate decode tokens/s once all
// streams decode (and its ratio to one stream's), the streams' time to first token (p50,
// p99), and the TTFT of a request that arrives while they decode, against one stream's
// TTFT on an idle scheduler.
// Usage: batching_bench MODEL [PROMPT_TOKENS] [NEW_TOKENS] [STREAMS,...] (1,2,4,8,16)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "heron/engine/scheduler.h"
#include "heron/model/loader.h"

using heron::engine::GenerateStats;
using heron::engine::RowRequest;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto at = static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(at, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: batching_bench MODEL [PROMPT_TOKENS] [NEW_TOKENS] [STREAMS,...]\n";
    return 2;
  }
  const int prompt = argc > 2 ? std::stoi(argv[2]) : 128;
  const int new_tokens = argc > 3 ? std::stoi(argv[3]) : 32;
  std::vector<int> stream_counts;
  for (std::stringstream list(argc > 4 ? argv[4] : "1,2,4,8,16"); list.good();) {
    std::string item;
    std::getline(list, item, ',');
    stream_counts.push_back(std::stoi(item));
  }
  auto loaded = heron::model::load_model(argv[1], {.load_tokenizer = false});
  const auto& model = *loaded.model;
  // A stream's request; on_token counts its tokens into `tokens` and stamps the first.
  struct Tally {
    std::vector<double> ttft;  // ms
    int first_tokens = 0;      // streams that have their first token
    int tokens = 0;            // every token
    Clock::time_point all_started;
    int tokens_at_all_started = 0;
  };
  auto request = [&](int salt, Tally& tally, int streams) {
    RowRequest r;
    for (int i = 0; i < prompt; ++i) r.prompt.push_back(100 + (i * 37 + salt * 11) % 5000);
    r.options.max_tokens = new_tokens;
    r.options.ignore_eos = true;
    r.options.sampling.temperature = 0;
    r.on_token = [&tally, streams, first = true](const heron::engine::TokenStep&) mutable {
      ++tally.tokens;
      if (first && ++tally.first_tokens == streams) {
        tally.all_started = Clock::now();
        tally.tokens_at_all_started = tally.tokens;
      }
      first = false;
      return heron::engine::Next::Continue;
    };
    r.on_done = [&tally](const GenerateStats& s) { tally.ttft.push_back(s.prompt_seconds * 1000); };
    return r;
  };
  double single = 0;
  double idle_ttft = 0;
  for (const int streams : stream_counts) {
    // Decode: the streams arrive together; tokens/s from when all have their first token.
    Tally tally;
    {
      heron::engine::Scheduler scheduler(model, streams);
      for (int s = 0; s < streams; ++s) scheduler.add(request(s, tally, streams));
      while (!scheduler.idle()) scheduler.step();
    }
    const double window = std::chrono::duration<double>(Clock::now() - tally.all_started).count();
    const double tps = (tally.tokens - tally.tokens_at_all_started) / window;
    if (single == 0) single = tps;
    if (idle_ttft == 0) idle_ttft = tally.ttft[0];
    // A late request arrives while the streams decode.
    Tally load, late;
    {
      heron::engine::Scheduler scheduler(model, streams + 1);
      for (int s = 0; s < streams; ++s) scheduler.add(request(s, load, streams));
      bool added = false;
      while (!scheduler.idle()) {
        if (!added && load.first_tokens == streams) {
          scheduler.add(request(1000, late, 1));
          added = true;
        }
        scheduler.step();
      }
    }
    std::cout << std::fixed << "streams " << std::setw(2) << streams << ": decode "
              << std::setprecision(1) << tps << " tokens/s (x" << std::setprecision(2)
              << tps / single << "), TTFT p50 " << std::setprecision(0)
              << percentile(tally.ttft, 0.5) << " ms p99 " << percentile(tally.ttft, 0.99)
              << " ms, a late request's " << late.ttft[0] << " ms (x" << std::setprecision(2)
              << late.ttft[0] / idle_ttft << " of idle)\n";
  }
  return 0;
}
