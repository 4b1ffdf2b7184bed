// Qwen3-Coder, Qwen3.5 and Nemotron 3: XML inside <tool_call>, one parameter per tag,
// each value between newlines: <function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>.
#include "heron/chat_output/call_syntax.h"
#include "heron/chat_output/space.h"

namespace heron::chat_output {

namespace {

constexpr std::string_view kFunction = "<function=";
constexpr std::string_view kFunctionEnd = "</function>";
constexpr std::string_view kParameter = "<parameter=";
constexpr std::string_view kParameterEnd = "</parameter>";
// The text between `open`...'>' and `close`: its name and value; `rest` moves past it.
bool tagged(std::string_view& rest, std::string_view open, std::string_view close,
            std::string_view& name, std::string_view& value) {
  if (!is_blank(rest.substr(0, rest.find(open)))) return false;  // only space between tags
  const size_t at = rest.find(open);
  if (at == std::string_view::npos) return false;
  rest.remove_prefix(at + open.size());
  const size_t gt = rest.find('>');
  const size_t end = rest.find(close);
  if (gt == std::string_view::npos || end == std::string_view::npos || gt > end) return false;
  name = rest.substr(0, gt);
  value = rest.substr(gt + 1, end - gt - 1);
  rest.remove_prefix(end + close.size());
  return true;
}

std::string_view strip_newlines(std::string_view v) {
  if (v.starts_with('\n')) v.remove_prefix(1);
  if (v.ends_with('\n')) v.remove_suffix(1);
  return v;
}

std::optional<std::vector<ToolCall>> parse_qwen3_coder(std::string_view body,
                                                       const ToolNames& known) {
  std::string_view name, inner;
  if (!tagged(body, kFunction, kFunctionEnd, name, inner) || !is_blank(body)) return std::nullopt;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
  std::string_view key, value;
  while (!is_blank(inner)) {
    if (!tagged(inner, kParameter, kParameterEnd, key, value)) return std::nullopt;
    arguments[std::string(key)] = tagged_argument(strip_newlines(value));
  }
  return single_call(name, arguments, known);
}

}  // namespace

CallSyntax qwen3_coder_syntax() {
  return {{{"<tool_call>", "</tool_call>"}}, parse_qwen3_coder};
}

}  // namespace heron::chat_output
