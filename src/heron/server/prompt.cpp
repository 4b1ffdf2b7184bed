#include "heron/server/prompt.h"

#include "heron/http/http_error.h"

namespace heron::server {

std::string render_chat(const std::string& chat_template,
                        const std::vector<chat::Message>& messages, const std::string& field) {
  if (chat_template.empty()) {
    throw http::bad_request("this model has no chat template; use /api/generate with raw=true");
  }
  std::string prompt;
  try {
    prompt =
        chat::ChatMLTemplate::parse(chat_template).render(messages, /*add_generation_prompt=*/true);
  } catch (const http::HttpError&) {
    throw;
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

}  // namespace heron::server
