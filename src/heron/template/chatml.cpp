#include "heron/template/chatml.h"

#include "heron/core/error.h"

namespace heron::chat {

namespace {
constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";
}  // namespace

ChatMLTemplate ChatMLTemplate::parse(const std::string& source) {
  if (source.find(kStart) == std::string::npos || source.find(kEnd) == std::string::npos) {
    throw Error(
        "this model's chat template is not ChatML, and only ChatML is supported so far; "
        "pass --raw and format the prompt yourself");
  }
  ChatMLTemplate t;
  // A literal system turn inside the template is its default system prompt.
  const std::string marker = std::string(kStart) + "system\n";
  auto at = source.find(marker);
  if (at != std::string::npos) {
    auto begin = at + marker.size();
    auto end = source.find(kEnd, begin);
    auto text = source.substr(begin, end - begin);
    // A template that builds the system turn from variables has no literal default.
    if (end != std::string::npos && text.find_first_of("'\"{}+") == std::string::npos) {
      t.default_system_ = text;
    }
  }
  return t;
}

std::string ChatMLTemplate::render(const std::vector<Message>& messages,
                                   bool add_generation_prompt) const {
  std::string out;
  if (default_system_ && !messages.empty() && messages.front().role != "system") {
    out.append(kStart).append("system\n").append(*default_system_).append(kEnd).append("\n");
  }
  for (const auto& m : messages) {
    out.append(kStart).append(m.role).append("\n").append(m.content).append(kEnd).append("\n");
  }
  if (add_generation_prompt) out.append(kStart).append("assistant\n");
  return out;
}

}  // namespace heron::chat
