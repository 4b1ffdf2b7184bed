#pragma once
// Renders ChatML chat templates (SmolLM2, Qwen, ...) until the Jinja engine lands:
// recognises a ChatML template, including a default system prompt it inserts when
// the conversation has none, and renders messages the way the template does.
#include <optional>
#include <string>
#include <vector>

namespace heron::chat {

struct Message {
  std::string role;
  std::string content;
};

class ChatMLTemplate {
 public:
  // Throws heron::Error when `source` is not a ChatML template.
  static ChatMLTemplate parse(const std::string& source);
  std::string render(const std::vector<Message>& messages, bool add_generation_prompt) const;
  const std::optional<std::string>& default_system() const { return default_system_; }

 private:
  std::optional<std::string> default_system_;
};

}  // namespace heron::chat
