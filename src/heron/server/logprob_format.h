#pragma once
// Runner logprob entries ({id, token, bytes, logprob, top_logprobs}) in the shape
// Ollama and OpenAI chat share: {token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}.
#include <nlohmann/json.hpp>

namespace heron::server {

nlohmann::json client_logprobs(const nlohmann::json& runner_entries);

}  // namespace heron::server
