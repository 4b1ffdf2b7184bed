#pragma once
// Chat messages -> prompt text with the model's chat template. One function, so the
// Jinja engine can replace the ChatML renderer here without touching the APIs.
#include <string>
#include <vector>

#include "heron/template/chatml.h"

namespace heron::server {

// Throws http::HttpError(400) when the model's template cannot be rendered.
std::string render_chat(const std::string& chat_template,
                        const std::vector<chat::Message>& messages);

}  // namespace heron::server
