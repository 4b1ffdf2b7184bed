#include "heron/spec/cost_file.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "heron/core/error.h"
#include "heron/core/sha256.h"

namespace heron::spec {

namespace fs = std::filesystem;

fs::path cost_file(const fs::path& store_root, const std::string& model_key) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return store_root / "speculation" /
         (Sha256::of("heron speculation costs v1;" + model_key + ";" + host) + ".json");
}

void load_costs(const fs::path& file, DepthController& controller) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return;
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot be read");
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw Error(file.string() + ": not JSON");
  try {
    controller.load_costs(json);
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

void save_costs(const fs::path& file, const DepthController& controller) {
  fs::create_directories(file.parent_path());
  const fs::path tmp = file.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << controller.costs().dump() << "\n";
    if (!out.flush()) throw Error(tmp.string() + ": cannot be written");
  }
  fs::rename(tmp, file);
}

bool speculation_enabled_from_env() {
  const char* v = std::getenv("HERON_SPECULATION");
  if (v == nullptr || *v == '\0') return true;
  const std::string s = v;
  if (s == "on" || s == "1") return true;
  if (s == "off" || s == "0") return false;
  throw Error("$HERON_SPECULATION must be 'on' or 'off', not '" + s + "'");
}

}  // namespace heron::spec
