#pragma once
// The output format a request asks for, as the runner takes it (GenerationParams::format):
// "" for free text, "json" for any JSON object, or a JSON schema's text. The schema is
// read again from the raw body in key order (nlohmann::json sorts keys, and properties are
// written in the schema's order), and compiled here as well, so a schema heron cannot
// follow is the client's 400 (naming the keyword) before any model loads.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace heron::server {

// Ollama's `format`: "" or absent, "json", or a schema object. `raw`: the body's text.
std::string read_ollama_format(const nlohmann::json& body, std::string_view raw);
// OpenAI's `response_format`: {"type": "text" | "json_object" | "json_schema"}, the last
// with {"json_schema": {"name", "schema", "strict"}}.
std::string read_openai_response_format(const nlohmann::json& body, std::string_view raw);

}  // namespace heron::server
