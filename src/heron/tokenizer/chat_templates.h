#pragma once
// Where a tokenizer's chat templates come from, readable without building the tokenizer
// (the server's /api/show reports them). Keys as Tokenizer::chat_templates(): "default"
// for a single template, else each template's name.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

// GGUF metadata: tokenizer.chat_template ("default") and tokenizer.chat_template.<name>.
std::map<std::string, std::string> gguf_chat_templates(const nlohmann::json& metadata);
// tokenizer_config.json's "chat_template": a string, or a list of {"name", "template"};
// absent or null gives none. Throws heron::Error for any other shape.
std::map<std::string, std::string> config_chat_templates(const nlohmann::json& config);

}  // namespace heron::tokenizer
