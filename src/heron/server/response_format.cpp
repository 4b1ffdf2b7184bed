#include "heron/server/response_format.h"

#include <initializer_list>

#include "heron/core/error.h"
#include "heron/grammar/json_schema.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

namespace {

// The schema at `path` in the raw body, keys in the client's order, checked and compiled.
std::string checked_schema(const nlohmann::json& schema, std::string_view raw,
                           std::initializer_list<const char*> path, const std::string& name) {
  if (!schema.is_object()) throw http::bad_request(name + " must be a JSON schema object");
  auto ordered = nlohmann::ordered_json::parse(raw, nullptr, /*allow_exceptions=*/false);
  for (const char* key : path) {
    if (!ordered.is_object() || !ordered.contains(key)) {
      ordered = nlohmann::ordered_json(schema);  // only when the body was not the text given
      break;
    }
    ordered = nlohmann::ordered_json(ordered[key]);
  }
  try {
    grammar::compile_json_schema(ordered);
  } catch (const Error& e) {
    throw http::bad_request(name + ": " + e.what());
  }
  return ordered.dump();
}

}  // namespace

std::string read_ollama_format(const nlohmann::json& body, std::string_view raw) {
  const auto* format = http::field(body, "format");
  if (!format || format->is_null()) return "";
  if (format->is_string()) {
    const auto& s = format->get_ref<const std::string&>();
    if (s.empty() || s == "json") return s;
    throw http::bad_request("format must be \"json\" or a JSON schema object, not \"" + s + "\"");
  }
  return checked_schema(*format, raw, {"format"}, "format");
}

std::string read_openai_response_format(const nlohmann::json& body, std::string_view raw) {
  const auto* rf = http::get_object(body, "response_format", "response_format");
  if (!rf) return "";
  const auto type = http::get_string(*rf, "type", "response_format.type").value_or("text");
  if (type == "text") return "";
  if (type == "json_object") return "json";
  if (type != "json_schema") {
    throw http::bad_request("response_format.type must be text, json_object or json_schema, not '" +
                            type + "'");
  }
  const auto* spec = http::get_object(*rf, "json_schema", "response_format.json_schema");
  if (!spec) throw http::bad_request("response_format.json_schema is required for json_schema");
  const auto* schema = http::field(*spec, "schema");
  if (!schema) throw http::bad_request("response_format.json_schema.schema is required");
  return checked_schema(*schema, raw, {"response_format", "json_schema", "schema"},
                        "response_format.json_schema.schema");
}

}  // namespace heron::server
