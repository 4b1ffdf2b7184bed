// heron's side of bench/bench_cuda.py: load a model once, then time prefill and
// decode through engine::generate (the code path `heron generate` and the runner use)
// on random prompt ids. Prints one JSON object.
// Usage: generate_bench --model DIR [--dtype bfloat16] [--runs 512:128,4096:1] [--repeats 3]
//   each run P:D is a P-token prompt followed by D greedy tokens; every run is done once
//   untimed, then --repeats times; the medians are reported, and the first request's
//   prefill speed (kernel compilation belongs to load, not to it).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <sstream>

#include <mlx/memory.h>
#include <nlohmann/json.hpp>

#include "heron/cli/args.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"

namespace {

using heron::cli::Args;
using heron::cli::UsageError;

const std::vector<heron::cli::FlagSpec> kFlags = {
    {"model", true, "Hugging Face model directory"},
    {"dtype", true, "compute type (default: the loader's choice)"},
    {"runs", true, "comma-separated PROMPT:DECODE token counts (default 512:128,4096:1)"},
    {"repeats", true, "timed repetitions of each run (default 3)"},
};

struct Run {
  int prompt = 0;
  int decode = 0;
};

std::vector<Run> parse_runs(const std::string& text) {
  std::vector<Run> runs;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Run r;
    char colon = 0;
    std::stringstream one(item);
    if (!(one >> r.prompt >> colon >> r.decode) || colon != ':' || r.prompt < 1 || r.decode < 1) {
      throw UsageError("--runs wants PROMPT:DECODE pairs like 512:128, not '" + item + "'");
    }
    runs.push_back(r);
  }
  return runs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  Args args("generate_bench", kFlags, {argv + 1, argv + argc});
  if (!args.has("model")) throw UsageError("--model is required");
  heron::model::LoadOptions options{.load_tokenizer = false};
  if (auto name = args.get("dtype")) {
    options.dtype = heron::model::dtype_from_name(*name);
    if (!options.dtype) throw UsageError("unknown --dtype '" + *name + "'");
  }
  const auto runs = parse_runs(args.get_or("runs", "512:128,4096:1"));
  const int repeats = static_cast<int>(args.get_int("repeats", 3, 1, 100));

  const auto start = std::chrono::steady_clock::now();
  auto loaded = heron::model::load_model(*args.get("model"), options);
  const double load_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& model = *loaded.model;

  std::mt19937 rng(7);
  std::uniform_int_distribution<int> token(0, model.config().vocab_size - 1);
  nlohmann::json out = {{"load_s", load_s}, {"runs", nlohmann::json::array()}};
  for (const auto& run : runs) {
    std::vector<double> prefill, decode;
    mlx::core::reset_peak_memory();
    for (int rep = 0; rep <= repeats; ++rep) {
      std::vector<int> prompt(run.prompt);
      for (auto& t : prompt) t = token(rng);
      heron::engine::GenerateOptions gen;
      gen.max_tokens = run.decode;
      gen.ignore_eos = true;
      gen.sampling.temperature = 0;
      heron::cache::PrefixCache cache(model.make_caches(), {});
      auto stats = heron::engine::generate(
          model, cache, prompt, gen, [](const auto&) { return heron::engine::Next::Continue; });
      if (rep == 0) {  // untimed: first use of this prompt length
        if (out["runs"].empty())
          out["first_request_prefill_tps"] = run.prompt / stats.prompt_seconds;
        continue;
      }
      prefill.push_back(run.prompt / stats.prompt_seconds);
      if (stats.decode_tokens > 1)
        decode.push_back((stats.decode_tokens - 1) / stats.decode_seconds);
    }
    nlohmann::json r = {{"prompt_tokens", run.prompt},
                        {"prefill_tps", median(prefill)},
                        {"peak_memory_mib", mlx::core::get_peak_memory() >> 20}};
    if (!decode.empty()) {
      r["decode_tokens"] = run.decode;
      r["decode_tps"] = median(decode);
    }
    out["runs"].push_back(r);
  }
  std::cout << out.dump() << std::endl;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "generate_bench: " << e.what() << "\n";
  return 1;
}
