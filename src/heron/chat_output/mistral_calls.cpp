// Mistral: [TOOL_CALLS] then a JSON array of {"name", "arguments"} (v3 tokenizers), or
// name[ARGS]{..} per call, each after its own [TOOL_CALLS] (v11 and later).
#include "heron/chat_output/call_syntax.h"

namespace heron::chat_output {

namespace {

constexpr std::string_view kMarker = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";

// name[ARGS]{..}, the newer form.
std::optional<ToolCall> named_call(std::string_view text, const ToolNames& known) {
  const size_t args = text.find(kArgs);
  if (args == std::string_view::npos) return std::nullopt;
  std::string_view name = text.substr(0, args);
  if (const size_t id = name.find("[CALL_ID]"); id != std::string_view::npos) {
    name = name.substr(0, id);
  }
  auto arguments = parse_json(text.substr(args + kArgs.size()));
  if (!arguments) return std::nullopt;
  return make_call(nlohmann::ordered_json(std::string(name)), &*arguments, known);
}

std::optional<std::vector<ToolCall>> parse_mistral(std::string_view body, const ToolNames& known) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return std::nullopt;
  if (body[first] == '[' || body[first] == '{') return calls_from_json(body, known);
  std::vector<ToolCall> calls;
  for (;;) {
    const size_t next = body.find(kMarker);
    auto call = named_call(body.substr(0, next), known);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    if (next == std::string_view::npos) return calls;
    body.remove_prefix(next + kMarker.size());
  }
}

}  // namespace

CallSyntax mistral_syntax() {
  return {{{std::string(kMarker), ""}}, parse_mistral};
}

}  // namespace heron::chat_output
