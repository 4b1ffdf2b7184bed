#pragma once
// Chat input -> prompt text with the model's chat template (template/chat_prompt.h has the
// rules), read from the runner's /status or replaced by the model's template override.
#include <string>

#include <nlohmann/json.hpp>

#include "heron/server/model_resolver.h"
#include "heron/template/chat_prompt.h"

namespace heron::server {

// Throws http::HttpError(400) with the template's message when rendering fails.
std::string render_prompt(const nlohmann::json& runner_status, const ResolvedModel& model,
                          const chat::ChatInput& input);

}  // namespace heron::server
