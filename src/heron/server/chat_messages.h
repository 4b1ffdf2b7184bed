#pragma once
// Chat messages from an Ollama (/api/chat) or OpenAI (/v1/chat/completions) body,
// validated field by field; errors name the message ("messages[3].role").
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/template/chatml.h"

namespace heron::server {

// More messages than this in one request is a 400 naming `messages`: a conversation
// that long cannot fit any context, and each message costs template work.
constexpr size_t kMaxMessages = 4096;

// Ollama: "messages" may be absent or empty (a load-only request); roles system, user,
// assistant, tool; images and tool_calls are rejected.
std::vector<chat::Message> parse_ollama_messages(const nlohmann::json& body);
// OpenAI: "messages" must be a non-empty array; "developer" is read as "system";
// content is a string or an array of text parts.
std::vector<chat::Message> parse_openai_messages(const nlohmann::json& body);

}  // namespace heron::server
