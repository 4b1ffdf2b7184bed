#include "heron/server/prompt.h"

#include "heron/core/error.h"
#include "heron/http/http_error.h"
#include "heron/server/capabilities.h"

namespace heron::server {

namespace {

// The conversation with the model's SYSTEM (when the request has no system message)
// and MESSAGEs (from its Modelfile) in front.
chat::ChatInput with_model_messages(const ResolvedModel& model, const chat::ChatInput& input) {
  if (!model.system && model.messages.empty()) return input;
  chat::ChatInput out = input;
  out.messages = nlohmann::ordered_json::array();
  bool has_system = false;
  for (const auto& m : input.messages) has_system = has_system || m.value("role", "") == "system";
  if (model.system && !has_system) {
    out.messages.push_back({{"role", "system"}, {"content", *model.system}});
  }
  for (const auto& m : model.messages) out.messages.push_back(m);
  for (const auto& m : input.messages) out.messages.push_back(m);
  return out;
}

}  // namespace

std::string render_prompt(const nlohmann::json& runner_status, const ResolvedModel& model,
                          const chat::ChatInput& input, const std::string& field) {
  require_completion(runner_status, model.name);
  const auto format = runner_status.find("chat");
  if (format == runner_status.end()) {
    throw http::HttpError(500, "the model runner did not report its chat format");
  }
  std::string prompt;
  try {
    prompt = chat::render_chat(chat::ChatFormat::from_json(*format),
                               with_model_messages(model, input), model.chat_template);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
  if (prompt.size() > kMaxPromptBytes) {
    throw http::bad_request(field + ": the prompt rendered from the chat template is " +
                            std::to_string(prompt.size()) + " bytes, over the limit of " +
                            std::to_string(kMaxPromptBytes >> 20) + " MiB");
  }
  return prompt;
}

chat_output::OutputFormat output_format(const nlohmann::json& runner_status,
                                        const ResolvedModel& model, const chat::ChatInput& input,
                                        const std::string& prompt) {
  const auto format = runner_status.find("chat");
  if (format == runner_status.end()) return {};
  try {
    const auto source = chat::select_template(chat::ChatFormat::from_json(*format),
                                              !input.tools.is_null(), model.chat_template);
    return chat_output::detect_output_format(source, prompt);
  } catch (const Error&) {
    return {};  // render_prompt has already refused such a request
  }
}

}  // namespace heron::server
