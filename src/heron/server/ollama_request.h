#pragma once
// The parts of an Ollama /api/generate or /api/chat request that both share: model,
// options with Ollama's defaults, logprobs, keep_alive, stream, and the fields heron
// does not support yet (rejected with a 400 saying so).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "heron/api/generation_params.h"
#include "heron/server/context.h"

namespace heron::server {

struct OllamaRequest {
  ResolvedModel model;
  api::GenerationParams params;
  KeepAlive keep_alive;
  bool stream = true;
};

// raw_body: the text `body` was parsed from (a schema in `format` keeps its key order).
OllamaRequest parse_ollama_request(const nlohmann::json& body, std::string_view raw_body,
                                   const ServerContext& ctx);

}  // namespace heron::server
