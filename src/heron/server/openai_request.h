#pragma once
// The fields /v1/chat/completions and /v1/completions share, validated with OpenAI's
// ranges; anything heron cannot honour (n > 1, response_format, tools on
// /v1/completions, ...) is a 400.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "heron/api/generation_params.h"
#include "heron/server/context.h"

namespace heron::server {

struct OpenAIRequest {
  ResolvedModel model;
  api::GenerationParams params;
  bool stream = false;
  bool include_usage = false;
};

// `legacy`: /v1/completions, where logprobs is an integer (the number of alternatives).
// raw_body: the text `body` was parsed from (a schema in response_format keeps its key order).
OpenAIRequest parse_openai_request(const nlohmann::json& body, std::string_view raw_body,
                                   const ServerContext& ctx, bool legacy);

}  // namespace heron::server
