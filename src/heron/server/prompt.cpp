#include "heron/server/prompt.h"

#include "heron/http/http_error.h"

namespace heron::server {

std::string render_chat(const std::string& chat_template,
                        const std::vector<chat::Message>& messages) {
  if (chat_template.empty()) {
    throw http::bad_request("this model has no chat template; use /api/generate with raw=true");
  }
  try {
    return chat::ChatMLTemplate::parse(chat_template)
        .render(messages, /*add_generation_prompt=*/true);
  } catch (const http::HttpError&) {
    throw;
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
}

}  // namespace heron::server
