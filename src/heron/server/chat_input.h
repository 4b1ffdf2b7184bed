#pragma once
// The conversation of /api/chat and /v1/chat/completions -> what the chat template gets:
// one parser for both APIs. Messages keep role, content (a string; OpenAI's arrays of text
// parts are joined), tool_calls (arguments as an object, also when sent as a JSON string),
// tool_call_id, tool_name, name and thinking/reasoning_content; "developer" becomes
// "system". Images are rejected: heron's models take text only. Tools pass through as
// given; an empty tools array counts as none. `documents` (an array of objects, for RAG
// templates such as Command-R's) is a heron extension to both APIs.
#include <cstddef>
#include <string>

#include "heron/template/chat_prompt.h"

namespace heron::server {

// More messages than this in one request is a 400 naming `messages`: a conversation
// that long cannot fit any context, and each message costs template work.
constexpr size_t kMaxMessages = 4096;

// `raw_body` is parsed again keeping key order, so tools and tool-call arguments reach
// the template's tojson in the client's order. Throws http::HttpError(400) naming the
// field.
chat::ChatInput parse_chat_input(const std::string& raw_body);

}  // namespace heron::server
