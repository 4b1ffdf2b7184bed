#include "heron/runner/scripted_output.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "heron/core/error.h"

namespace heron::runner {

std::optional<std::filesystem::path> scripted_output_from_env() {
  const char* path = std::getenv("HERON_TEST_SCRIPTED_OUTPUT");
  if (path == nullptr || *path == '\0') return std::nullopt;
  return std::filesystem::path(path);
}

engine::GenerateStats emit_scripted_output(
    const std::filesystem::path& script, const tokenizer::Tokenizer& tokenizer, int prompt_tokens,
    const engine::GenerateOptions& options,
    const std::function<engine::Next(const engine::TokenStep&)>& on_token) {
  std::ifstream in(script, std::ios::binary);
  if (!in) throw Error("cannot read the scripted output " + script.string());
  std::stringstream text;
  text << in.rdbuf();
  engine::GenerateStats stats;
  stats.prompt_tokens = prompt_tokens;
  stats.done_reason = "stop";
  for (const int id : tokenizer.encode(text.str(), /*add_special=*/false)) {
    if (options.max_tokens >= 0 && stats.decode_tokens >= options.max_tokens) {
      stats.done_reason = "length";
      break;
    }
    ++stats.decode_tokens;
    const auto next = on_token({.id = id});
    if (next == engine::Next::Cancel) stats.done_reason = "cancelled";
    if (next != engine::Next::Continue) break;
  }
  return stats;
}

}  // namespace heron::runner
