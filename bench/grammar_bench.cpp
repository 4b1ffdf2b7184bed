// Per-token mask cost of structured outputs' grammars; bench/bench_grammar.py runs it.
//   grammar_bench TOKENIZER_JSON END_ID STEPS SEED SCHEMA.json...
// For each schema: from the start, time the mask, take a random allowed token (seed + the
// schema's index), until the value is complete or STEPS tokens. Prints one JSON array:
// [{"schema", "micros": [...], "complete"}].
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/grammar/json_schema.h"
#include "heron/grammar/matcher.h"
#include "heron/tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json walk(const std::filesystem::path& schema_file,
                    const std::shared_ptr<const heron::grammar::Vocabulary>& vocabulary,
                    int32_t end_id, int steps, unsigned seed) {
  std::ifstream in(schema_file);
  heron::grammar::Matcher matcher(heron::grammar::compile_json_schema(nlohmann::json::parse(in)),
                                  vocabulary);
  std::mt19937 rng(seed);
  std::vector<double> micros;
  std::vector<int32_t> allowed;
  while (!matcher.complete() && static_cast<int>(micros.size()) < steps) {
    const auto start = Clock::now();
    auto mask = matcher.allowed();
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    allowed.clear();
    for (size_t id = 0; id < mask->allowed.size(); ++id) {
      if (mask->allowed[id]) allowed.push_back(static_cast<int32_t>(id));
    }
    if (allowed.empty()) break;
    const int32_t id = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    matcher.accept(id);
    if (id == end_id) break;  // ends the walk as it ends generation
  }
  return {{"schema", schema_file.stem().string()},
          {"micros", micros},
          {"complete", matcher.accepting()}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: grammar_bench TOKENIZER_JSON END_ID STEPS SEED SCHEMA.json...\n";
    return 2;
  }
  try {
    auto tokenizer = heron::tokenizer::Tokenizer::from_json_files(argv[1], std::nullopt);
    const int32_t end_id = std::stoi(argv[2]);
    auto vocabulary = heron::grammar::Vocabulary::from_tokenizer(*tokenizer, {end_id});
    const int steps = std::stoi(argv[3]);
    const auto seed = static_cast<unsigned>(std::stoul(argv[4]));
    nlohmann::json out = nlohmann::json::array();
    for (int i = 5; i < argc; ++i)
      out.push_back(walk(argv[i], vocabulary, end_id, steps, seed + i - 5));
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "grammar_bench: " << e.what() << "\n";
    return 1;
  }
}
