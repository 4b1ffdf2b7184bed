// GLM-4.5 and later: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...
// </tool_call>, one key/value pair of tags per argument.
#include "heron/chat_output/call_syntax.h"
#include "heron/chat_output/space.h"

namespace heron::chat_output {

namespace {

constexpr std::string_view kKey = "<arg_key>";
constexpr std::string_view kKeyEnd = "</arg_key>";
constexpr std::string_view kValue = "<arg_value>";
constexpr std::string_view kValueEnd = "</arg_value>";
// The text inside <open>...</close> at the start of `rest` (after space); `rest` moves on.
std::optional<std::string_view> take(std::string_view& rest, std::string_view open,
                                     std::string_view close) {
  rest = trim(rest);
  if (!rest.starts_with(open)) return std::nullopt;
  const size_t end = rest.find(close);
  if (end == std::string_view::npos) return std::nullopt;
  const auto inner = rest.substr(open.size(), end - open.size());
  rest.remove_prefix(end + close.size());
  return inner;
}

std::optional<std::vector<ToolCall>> parse_glm(std::string_view body, const ToolNames& known) {
  const size_t first_key = body.find(kKey);
  const auto name = trim(body.substr(0, first_key));
  std::string_view rest = first_key == std::string_view::npos ? "" : body.substr(first_key);
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
  while (!trim(rest).empty()) {
    const auto key = take(rest, kKey, kKeyEnd);
    const auto value = key ? take(rest, kValue, kValueEnd) : std::nullopt;
    if (!value) return std::nullopt;
    arguments[std::string(*key)] = tagged_argument(*value);
  }
  return single_call(name, arguments, known);
}

}  // namespace

CallSyntax glm_syntax() {
  return {{{"<tool_call>", "</tool_call>"}}, parse_glm};
}

}  // namespace heron::chat_output
