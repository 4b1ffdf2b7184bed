#pragma once
// What a loaded model can do, from its runner's /status "capabilities" ("completion" for
// generative models, "embedding" for encoders): a request for the other is a 400.
#include <string>

#include <nlohmann/json.hpp>

namespace heron::server {

bool runner_can(const nlohmann::json& runner_status, const std::string& capability);
// Throws http::HttpError(400) naming the model unless its runner generates text.
void require_completion(const nlohmann::json& runner_status, const std::string& model);
// The same for embeddings.
void require_embedding(const nlohmann::json& runner_status, const std::string& model);

}  // namespace heron::server
