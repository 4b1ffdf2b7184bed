#include "heron/server/capabilities.h"

#include <algorithm>

#include "heron/http/http_error.h"

namespace heron::server {

bool runner_can(const nlohmann::json& runner_status, const std::string& capability) {
  const auto it = runner_status.find("capabilities");
  return it != runner_status.end() && it->is_array() &&
         std::find(it->begin(), it->end(), capability) != it->end();
}

void require_completion(const nlohmann::json& runner_status, const std::string& model) {
  if (runner_can(runner_status, "completion")) return;
  throw http::bad_request("model '" + model +
                          "' does not generate text: it is an embedding model (use /api/embed "
                          "or /v1/embeddings)");
}

void require_embedding(const nlohmann::json& runner_status, const std::string& model) {
  if (runner_can(runner_status, "embedding")) return;
  throw http::bad_request("model '" + model + "' does not support embeddings: it generates text");
}

}  // namespace heron::server
