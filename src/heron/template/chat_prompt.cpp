#include "heron/template/chat_prompt.h"

#include "heron/core/error.h"
#include "heron/template/template.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::chat {

namespace {

// transformers' former default template (ChatML).
const char* const kChatML =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";
const char* const kPlain =
    "{% for message in messages %}{% if not loop.first %}{{ '\\n\\n' }}{% endif %}"
    "{{ message['content'] }}{% endfor %}";

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) throw Error(std::string("chat format: '") + key + "' must be a string");
  return it->get<std::string>();
}

}  // namespace

ChatFormat ChatFormat::from_tokenizer(const tokenizer::Tokenizer& tok) {
  ChatFormat f;
  f.templates = tok.chat_templates();
  auto spell = [&](std::optional<int32_t> id) -> std::optional<std::string> {
    const std::string* token = id ? tok.id_to_token(*id) : nullptr;
    if (!token) return std::nullopt;
    return *token;
  };
  f.bos_token = spell(tok.bos_id());
  f.eos_token = spell(tok.eos_id());
  f.has_chatml_tokens = tok.token_to_id("<|im_start|>").has_value();
  const auto empty = tok.encode("");
  f.adds_bos = tok.bos_id() && !empty.empty() && empty.front() == *tok.bos_id();
  return f;
}

nlohmann::json ChatFormat::to_json() const {
  nlohmann::json j = {
      {"templates", templates}, {"has_chatml_tokens", has_chatml_tokens}, {"adds_bos", adds_bos}};
  j["bos_token"] = bos_token ? nlohmann::json(*bos_token) : nlohmann::json(nullptr);
  j["eos_token"] = eos_token ? nlohmann::json(*eos_token) : nlohmann::json(nullptr);
  return j;
}

ChatFormat ChatFormat::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("chat format: expected a JSON object");
  ChatFormat f;
  if (const auto it = j.find("templates"); it != j.end()) {
    if (!it->is_object()) throw Error("chat format: 'templates' must be an object");
    for (const auto& [name, source] : it->items()) {
      if (!source.is_string()) throw Error("chat format: template '" + name + "' not a string");
      f.templates[name] = source.get<std::string>();
    }
  }
  f.bos_token = optional_string(j, "bos_token");
  f.eos_token = optional_string(j, "eos_token");
  f.has_chatml_tokens = j.value("has_chatml_tokens", false);
  f.adds_bos = j.value("adds_bos", false);
  return f;
}

std::string select_template(const ChatFormat& format, bool has_tools,
                            const std::optional<std::string>& override_source) {
  if (override_source) return *override_source;
  const auto& named = format.templates;
  if (named.empty()) {
    if (format.has_chatml_tokens) return kChatML;
    return format.adds_bos ? std::string("{{ bos_token }}") + kPlain : kPlain;
  }
  if (has_tools) {
    if (auto it = named.find("tool_use"); it != named.end()) return it->second;
  }
  if (auto it = named.find("default"); it != named.end()) return it->second;
  std::string names;
  for (const auto& [name, source] : named) names += (names.empty() ? "" : ", ") + name;
  throw Error("the model has several chat templates (" + names + ") and none is named 'default'");
}

nlohmann::ordered_json chat_context(const ChatFormat& format, const ChatInput& input) {
  nlohmann::ordered_json context = {{"messages", input.messages},
                                    {"tools", input.tools},
                                    {"documents", input.documents},
                                    {"add_generation_prompt", input.add_generation_prompt}};
  if (format.bos_token) context["bos_token"] = *format.bos_token;
  if (format.eos_token) context["eos_token"] = *format.eos_token;
  for (const auto& [key, value] : input.extra.items()) {
    if (key == "messages" || key == "tools" || key == "documents" ||
        key == "add_generation_prompt") {
      throw Error("chat template keyword '" + key + "' is set by the request itself");
    }
    context[key] = value;
  }
  return context;
}

std::string render_chat(const ChatFormat& format, const ChatInput& input,
                        const std::optional<std::string>& override_source) {
  const std::string source = select_template(format, !input.tools.is_null(), override_source);
  return Template::parse(source).render(chat_context(format, input));
}

}  // namespace heron::chat
