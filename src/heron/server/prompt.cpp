#include "heron/server/prompt.h"

#include "heron/core/error.h"
#include "heron/http/http_error.h"

namespace heron::server {

std::string render_prompt(const nlohmann::json& runner_status, const ResolvedModel& model,
                          const chat::ChatInput& input) {
  const auto format = runner_status.find("chat");
  if (format == runner_status.end()) {
    throw http::HttpError(500, "the model runner did not report its chat format");
  }
  try {
    return chat::render_chat(chat::ChatFormat::from_json(*format), input, model.chat_template);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
}

}  // namespace heron::server
