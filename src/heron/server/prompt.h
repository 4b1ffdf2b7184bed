#pragma once
// Chat input -> prompt text with the model's chat template (template/chat_prompt.h has the
// rules), read from the runner's /status or replaced by the model's template override.
#include <string>

#include <nlohmann/json.hpp>

#include "heron/chat_output/output_format.h"
#include "heron/server/model_resolver.h"
#include "heron/template/chat_prompt.h"

namespace heron::server {

// A rendered prompt over this size is a 400: it could not fit the largest context.
constexpr size_t kMaxPromptBytes = size_t{16} << 20;

// Throws http::HttpError(400) with the template's message when rendering fails, or
// naming `field` ("messages", "prompt") when the prompt is over kMaxPromptBytes.
std::string render_prompt(const nlohmann::json& runner_status, const ResolvedModel& model,
                          const chat::ChatInput& input, const std::string& field);

// How to read the answer to `prompt` back (chat_output/): the syntax of the template it
// was rendered with. A template that cannot be chosen has no syntax.
chat_output::OutputFormat output_format(const nlohmann::json& runner_status,
                                        const ResolvedModel& model, const chat::ChatInput& input,
                                        const std::string& prompt);

}  // namespace heron::server
