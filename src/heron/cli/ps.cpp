// `heron ps`: the loaded models (GET /api/ps), as Ollama shows them.
#include <chrono>
#include <iostream>

#include "heron/cli/api_client.h"
#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/cli/human_format.h"
#include "heron/cli/model_fields.h"

namespace heron::cli {

namespace {

// Ollama's PROCESSOR column: the share of the model's memory on the GPU.
std::string processor(int64_t size, int64_t vram) {
  if (vram <= 0 || size <= 0) return "100% CPU";
  if (vram >= size) return "100% GPU";
  const auto gpu = static_cast<int>(100 * vram / size);
  return std::to_string(100 - gpu) + "%/" + std::to_string(gpu) + "% CPU/GPU";
}

std::string until(const nlohmann::json& m) {
  const auto at = parse_rfc3339(m.value("expires_at", ""));
  if (!at) return "Never";
  if (*at < std::chrono::system_clock::now()) return "Stopping...";
  return human_time(*at);
}

}  // namespace

int run_ps(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, "show this help"}};
  Args args("ps", flags, argv);
  if (args.has("help")) {
    std::cout << "heron ps: the models loaded now, and until when\n\n" << Args::usage("ps", flags);
    return 0;
  }
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  }
  const auto reply = ApiClient(heron_host()).get("/api/ps");
  std::vector<std::vector<std::string>> rows = {{"NAME", "ID", "SIZE", "PROCESSOR", "UNTIL"}};
  for (const auto& m : models_of(reply)) {
    const int64_t size = m.value("size", int64_t{0});
    rows.push_back({model_name(m), short_digest(m), human_bytes(size),
                    processor(size, m.value("size_vram", int64_t{0})), until(m)});
  }
  print_table(std::cout, rows);
  return 0;
}

}  // namespace heron::cli
