#include "heron/server/chat_input.h"

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

namespace {

using ojson = nlohmann::ordered_json;
using http::bad_request;

const ojson* field(const ojson& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const ojson* string_field(const ojson& obj, const char* key, const std::string& at) {
  const ojson* v = field(obj, key);
  if (v && !v->is_string()) throw bad_request(at + "." + key + " must be a string");
  return v;
}

bool is_image_part(const std::string& type) {
  return type == "image_url" || type == "image" || type == "input_image";
}

// A string, or OpenAI's array of {"type": "text", "text": ...} parts (joined).
std::string content_text(const ojson& m, const std::string& at) {
  const ojson* c = field(m, "content");
  if (!c) return "";
  if (c->is_string()) return c->get<std::string>();
  if (!c->is_array()) throw bad_request(at + ".content must be a string or an array of parts");
  std::string text;
  for (size_t i = 0; i < c->size(); ++i) {
    const ojson& part = (*c)[i];
    const std::string here = at + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) throw bad_request(here + " must be an object");
    const ojson* type = string_field(part, "type", here);
    if (!type) throw bad_request(here + ".type is required");
    const auto& t = type->get_ref<const std::string&>();
    if (is_image_part(t)) {
      throw bad_request(here + ": images are not supported: heron's models take text only");
    }
    if (t != "text") throw bad_request(here + ": content part type '" + t + "' is not supported");
    const ojson* s = string_field(part, "text", here);
    if (!s) throw bad_request(here + ".text is required");
    text += s->get_ref<const std::string&>();
  }
  return text;
}

// {"id"?, "type": "function", "function": {"name", "arguments": {...}}}
ojson tool_call(const ojson& call, const std::string& at) {
  if (!call.is_object()) throw bad_request(at + " must be an object");
  ojson out = ojson::object();
  if (const ojson* id = string_field(call, "id", at)) out["id"] = *id;
  if (const ojson* type = string_field(call, "type", at); type && *type != "function") {
    throw bad_request(at + ".type must be 'function'");
  }
  out["type"] = "function";
  const ojson* fn = field(call, "function");
  if (!fn || !fn->is_object()) throw bad_request(at + ".function must be an object");
  const ojson* name = string_field(*fn, "name", at + ".function");
  if (!name) throw bad_request(at + ".function.name is required");
  ojson arguments = ojson::object();
  if (const ojson* args = field(*fn, "arguments")) {
    if (args->is_string()) {
      try {
        arguments = ojson::parse(args->get_ref<const std::string&>());
      } catch (const nlohmann::json::parse_error&) {
        throw bad_request(at + ".function.arguments is not valid JSON");
      }
    } else {
      arguments = *args;
    }
    if (!arguments.is_object()) {
      throw bad_request(at + ".function.arguments must be a JSON object (or its text)");
    }
  }
  out["function"] = {{"name", *name}, {"arguments", std::move(arguments)}};
  return out;
}

ojson message(const ojson& m, const std::string& at) {
  if (!m.is_object()) throw bad_request(at + " must be an object");
  const ojson* role_field = string_field(m, "role", at);
  if (!role_field) throw bad_request(at + ".role is required");
  std::string role = role_field->get<std::string>();
  if (role == "developer") role = "system";
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    throw bad_request(at + ".role must be system, developer, user, assistant or tool, got '" +
                      role + "'");
  }
  if (const ojson* images = field(m, "images");
      images && !(images->is_array() && images->empty())) {
    throw bad_request(at + ".images: images are not supported: heron's models take text only");
  }
  ojson out = {{"role", role}, {"content", content_text(m, at)}};
  if (const ojson* calls = field(m, "tool_calls")) {
    if (!calls->is_array()) throw bad_request(at + ".tool_calls must be an array");
    if (!calls->empty()) {
      ojson list = ojson::array();
      for (size_t i = 0; i < calls->size(); ++i) {
        list.push_back(tool_call((*calls)[i], at + ".tool_calls[" + std::to_string(i) + "]"));
      }
      out["tool_calls"] = std::move(list);
    }
  }
  for (const char* key : {"tool_call_id", "tool_name", "name", "thinking", "reasoning_content"}) {
    if (const ojson* v = string_field(m, key, at)) out[key] = *v;
  }
  return out;
}

}  // namespace

chat::ChatInput parse_chat_input(const std::string& raw_body) {
  const ojson body = http::parse_ordered_body(raw_body);
  chat::ChatInput input;
  if (const ojson* messages = field(body, "messages")) {
    if (!messages->is_array()) throw bad_request("messages must be an array");
    if (messages->size() > kMaxMessages) {
      throw bad_request("messages holds " + std::to_string(messages->size()) +
                        " messages; at most " + std::to_string(kMaxMessages) + " are accepted");
    }
    for (size_t i = 0; i < messages->size(); ++i) {
      input.messages.push_back(message((*messages)[i], "messages[" + std::to_string(i) + "]"));
    }
  }
  if (const ojson* tools = field(body, "tools")) {
    if (!tools->is_array()) throw bad_request("tools must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      if (!(*tools)[i].is_object()) {
        throw bad_request("tools[" + std::to_string(i) + "] must be an object");
      }
    }
    if (!tools->empty()) input.tools = *tools;
  }
  if (const ojson* documents = field(body, "documents")) {
    if (!documents->is_array()) throw bad_request("documents must be an array");
    for (size_t i = 0; i < documents->size(); ++i) {
      if (!(*documents)[i].is_object()) {
        throw bad_request("documents[" + std::to_string(i) + "] must be an object");
      }
    }
    input.documents = *documents;
  }
  return input;
}

}  // namespace heron::server
