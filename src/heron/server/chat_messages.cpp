#include "heron/server/chat_messages.h"

#include <string>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

namespace {

using json = nlohmann::json;

const json* messages_array(const json& body) {
  const json* messages = http::get_array(body, "messages", "messages");
  if (messages && messages->size() > kMaxMessages) {
    throw http::bad_request("messages holds " + std::to_string(messages->size()) +
                            " messages; at most " + std::to_string(kMaxMessages) + " are accepted");
  }
  return messages;
}

std::string role_of(const json& m, const std::string& at) {
  if (!m.is_object()) throw http::bad_request(at + " must be an object");
  auto role = http::get_string(m, "role", at + ".role");
  if (!role) throw http::bad_request(at + ".role is required");
  return *role;
}

bool known_role(const std::string& role) {
  return role == "system" || role == "user" || role == "assistant" || role == "tool";
}

// OpenAI message content: a string or an array of {"type": "text", "text": ...} parts.
std::string openai_text(const json& m, const std::string& at) {
  const json* c = http::field(m, "content");
  if (!c) return "";
  if (c->is_string()) return c->get<std::string>();
  if (!c->is_array())
    throw http::bad_request(at + ".content must be a string or an array of parts");
  std::string text;
  for (size_t i = 0; i < c->size(); ++i) {
    const auto& part = (*c)[i];
    const std::string part_at = at + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) throw http::bad_request(part_at + " must be an object");
    if (http::get_string(part, "type", part_at + ".type") != "text") {
      throw http::bad_request(at + ".content: only text parts are supported");
    }
    text += http::get_string(part, "text", part_at + ".text").value_or("");
  }
  return text;
}

}  // namespace

std::vector<chat::Message> parse_ollama_messages(const json& body) {
  std::vector<chat::Message> out;
  const json* messages = messages_array(body);
  if (!messages) return out;
  for (size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    const auto role = role_of(m, at);
    if (!known_role(role)) {
      throw http::bad_request(at + ".role must be system, user, assistant or tool, got '" + role +
                              "'");
    }
    if (const auto* v = http::field(m, "images"); v && !(v->is_array() && v->empty())) {
      throw http::bad_request(at +
                              ".images: images are not supported: heron's models take text only");
    }
    if (const auto* v = http::field(m, "tool_calls"); v && !(v->is_array() && v->empty())) {
      throw http::bad_request(at + ".tool_calls: tool calls are not supported yet");
    }
    out.push_back({role, http::get_string(m, "content", at + ".content").value_or("")});
  }
  return out;
}

std::vector<chat::Message> parse_openai_messages(const json& body) {
  const json* messages = messages_array(body);
  if (!messages || messages->empty()) throw http::bad_request("messages must be a non-empty array");
  std::vector<chat::Message> out;
  for (size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    auto role = role_of(m, at);
    if (role == "developer") role = "system";
    if (!known_role(role)) {
      throw http::bad_request(at + ".role must be system, developer, user, assistant or tool");
    }
    out.push_back({role, openai_text(m, at)});
  }
  return out;
}

}  // namespace heron::server
