#pragma once
// Every environment variable heron reads, once, with its default: `heron serve --help`
// prints this table and the README repeats it (tests/integration/test_cli_docs.py keeps
// the two and the code's getenv calls in step).
#include <string>
#include <vector>

namespace heron::cli {

struct EnvironmentVariable {
  const char* name;
  const char* default_value;
  const char* meaning;
};

const std::vector<EnvironmentVariable>& environment_variables();

// The table as `heron serve --help` shows it.
std::string environment_help();

// HERON_NUM_PARALLEL (as Ollama's OLLAMA_NUM_PARALLEL): requests a model decodes together,
// 1 to 256 (unset: 1). Throws UsageError otherwise. serve checks it at start; each runner
// reads it.
int num_parallel_from_env();

}  // namespace heron::cli
