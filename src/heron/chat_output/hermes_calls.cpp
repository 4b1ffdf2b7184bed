// Qwen 2.5/3 and the Hermes models: each call is one JSON object inside <tool_call> tags.
#include "heron/chat_output/call_syntax.h"

namespace heron::chat_output {

CallSyntax hermes_syntax() {
  return {
      {{"<tool_call>", "</tool_call>"}},
      [](std::string_view body, const ToolNames& known) -> std::optional<std::vector<ToolCall>> {
        auto value = parse_json(body);
        if (!value) return std::nullopt;
        auto call = call_from_object(*value, known);
        if (!call) return std::nullopt;
        return std::vector<ToolCall>{std::move(*call)};
      }};
}

}  // namespace heron::chat_output
