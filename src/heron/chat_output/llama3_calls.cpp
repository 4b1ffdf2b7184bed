// Llama 3.1-3.3: the template asks for {"name": function name, "parameters": {..}}; the
// model answers with that object alone, or after <|python_tag|> (3.1's ipython mode), where
// several calls are joined by ';'.
#include "heron/chat_output/call_syntax.h"

namespace heron::chat_output {

namespace {

// Splits at ';' outside JSON strings and brackets.
std::vector<std::string_view> split_calls(std::string_view body) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool in_string = false;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ';' && depth == 0) {
      parts.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(body.substr(start));
  return parts;
}

std::optional<std::vector<ToolCall>> parse_llama3(std::string_view body, const ToolNames& known) {
  std::vector<ToolCall> calls;
  for (auto part : split_calls(body)) {
    if (part.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;  // "a; b;"
    auto value = parse_json(part);
    if (!value) return std::nullopt;
    auto call = call_from_object(*value, known);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

}  // namespace

CallSyntax llama3_syntax() {
  return {{{"<|python_tag|>", ""}, {"{", "", /*answer_start_only=*/true, /*open_in_body=*/true}},
          parse_llama3};
}

}  // namespace heron::chat_output
