#include "heron/cli/model_fields.h"

#include "heron/core/error.h"

namespace heron::cli {

const nlohmann::json& models_of(const nlohmann::json& reply) {
  if (!reply.is_object() || !reply.contains("models") || !reply["models"].is_array()) {
    throw Error("the server's reply has no \"models\" list");
  }
  for (const auto& m : reply["models"]) {
    if (!m.is_object()) throw Error("the server's \"models\" list holds a non-object");
  }
  return reply["models"];
}

std::string model_name(const nlohmann::json& entry) {
  if (entry.contains("name") && entry["name"].is_string()) return entry["name"];
  if (entry.contains("model") && entry["model"].is_string()) return entry["model"];
  return "";
}

std::string short_digest(const nlohmann::json& entry) {
  if (!entry.contains("digest") || !entry["digest"].is_string()) return "";
  std::string d = entry["digest"];
  if (d.rfind("sha256:", 0) == 0) d = d.substr(7);
  return d.substr(0, 12);
}

}  // namespace heron::cli
