#include "heron/cli/host.h"

#include <cstdlib>
#include <stdexcept>

#include "heron/cli/args.h"

namespace heron::cli {

std::string HostAddress::url() const {
  return "http://" + host + ":" + std::to_string(port);
}

HostAddress parse_host(std::string text) {
  if (text.empty()) text = "127.0.0.1:11435";
  if (auto p = text.find("://"); p != std::string::npos) text = text.substr(p + 3);
  if (!text.empty() && text.back() == '/') text.pop_back();
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return {text, 11435};
  HostAddress a{text.substr(0, colon), 0};
  try {
    size_t used = 0;
    a.port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || a.port < 0 || a.port > 65535)
      throw std::out_of_range("");
  } catch (const std::exception&) {
    throw UsageError("$HERON_HOST has a bad port: '" + text + "'");
  }
  if (a.host.empty()) a.host = "127.0.0.1";
  return a;
}

HostAddress heron_host() {
  const char* v = std::getenv("HERON_HOST");
  return parse_host(v ? v : "");
}

std::filesystem::path heron_home() {
  if (const char* models = std::getenv("HERON_MODELS"); models && *models) {
    auto dir = std::filesystem::path(models).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();  // "models/" names "models"
    return dir.parent_path();
  }
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw Error("$HOME is not set (set it or $HERON_MODELS)");
  return std::filesystem::path(home) / ".heron";
}

}  // namespace heron::cli
