#pragma once
// Reading the model entries of /api/tags and /api/ps replies, which the CLI does not
// trust any more than other input.
#include <string>

#include <nlohmann/json.hpp>

namespace heron::cli {

// reply["models"], checked to be an array of objects.
const nlohmann::json& models_of(const nlohmann::json& reply);
// "name", else "model".
std::string model_name(const nlohmann::json& entry);
// The first 12 hex digits of the digest (Ollama's ID column), without "sha256:".
std::string short_digest(const nlohmann::json& entry);

}  // namespace heron::cli
