#pragma once
// A conversation -> prompt text, as transformers' apply_chat_template(tokenize=False) makes
// it with the model's own chat template.
//
// Template choice (transformers' rules): an override (the model store's) wins; else with
// tools the "tool_use" template when the model has one, else "default". A model with no
// template at all falls back to ChatML when its tokenizer has the <|im_start|> token, and
// otherwise to plain text: the message contents joined by blank lines (no roles, no tools)
// after the BOS token when the tokenizer adds one (a rendered prompt is encoded without
// special tokens, and base models such as Gemma 3 need their BOS).
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {
class Tokenizer;
}

namespace heron::chat {

// What a model's tokenizer says about chat formatting. Travels from the runner to the
// server inside /status as JSON.
struct ChatFormat {
  std::map<std::string, std::string> templates;  // by name; a single template is "default"
  std::optional<std::string> bos_token, eos_token;
  bool has_chatml_tokens = false;  // the tokenizer knows <|im_start|> (decides the fallback)
  bool adds_bos = false;           // the tokenizer puts BOS before a plain encoding

  static ChatFormat from_tokenizer(const tokenizer::Tokenizer& tok);
  nlohmann::json to_json() const;
  // Throws heron::Error on a malformed object.
  static ChatFormat from_json(const nlohmann::json& j);
};

struct ChatInput {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools = nullptr;      // null when the request has none
  nlohmann::ordered_json documents = nullptr;  // null when the request has none
  bool add_generation_prompt = true;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // enable_thinking, ...
};

// The template source the rules above choose. Throws heron::Error when the model has
// several named templates and none fits (as transformers does).
std::string select_template(const ChatFormat& format, bool has_tools,
                            const std::optional<std::string>& override_source = std::nullopt);

// The template's variables, as transformers passes them: messages, tools, documents,
// add_generation_prompt, the special tokens, then the extra keywords (which may replace
// the special tokens but not the others: that is a heron::Error).
nlohmann::ordered_json chat_context(const ChatFormat& format, const ChatInput& input);

// Renders the chosen template with chat_context(). Throws heron::Error with the template's message
// on any failure (syntax, raise_exception, limits).
std::string render_chat(const ChatFormat& format, const ChatInput& input,
                        const std::optional<std::string>& override_source = std::nullopt);

}  // namespace heron::chat
