#pragma once
// Chat messages -> prompt text with the model's chat template. One function, so the
// Jinja engine can replace the ChatML renderer here without touching the APIs.
#include <string>
#include <vector>

#include "heron/template/chatml.h"

namespace heron::server {

// A rendered prompt over this size is a 400: it could not fit the largest context.
constexpr size_t kMaxPromptBytes = size_t{16} << 20;

// Throws http::HttpError(400) when the model's template cannot be rendered or its
// output is over kMaxPromptBytes; `field` ("messages", "prompt") is named in the error.
std::string render_chat(const std::string& chat_template,
                        const std::vector<chat::Message>& messages, const std::string& field);

}  // namespace heron::server
