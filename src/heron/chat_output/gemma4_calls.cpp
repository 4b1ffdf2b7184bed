// Gemma 4: <|tool_call>call:NAME{key:value,...}<tool_call|>, its arguments in the
// template's own notation (format_argument): strings between <|"|> marks, bare keys,
// numbers, true/false/null, {..} and [..] as in JSON.
#include "heron/chat_output/call_syntax.h"
#include "heron/chat_output/space.h"

namespace heron::chat_output {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::string_view kQuote = R"(<|"|>)";
constexpr int kMaxDepth = 64;  // nesting a model writes; deeper is not a call

void skip_space(std::string_view& s) {
  s.remove_prefix(std::min(s.size(), s.find_first_not_of(kSpace)));
}

std::optional<ojson> value(std::string_view& s, int depth);

// A quoted string, or a bare word up to one of `ends`.
std::optional<std::string> word(std::string_view& s, std::string_view ends) {
  skip_space(s);
  if (s.starts_with(kQuote)) {
    s.remove_prefix(kQuote.size());
    const size_t close = s.find(kQuote);
    if (close == std::string_view::npos) return std::nullopt;
    std::string out(s.substr(0, close));
    s.remove_prefix(close + kQuote.size());
    return out;
  }
  const size_t end = s.find_first_of(ends);
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  std::string out(trim(s.substr(0, end)));
  s.remove_prefix(end);
  return out;
}

// {..} or [..] after its opening bracket, up to `close`.
std::optional<ojson> container(std::string_view& s, char close, int depth) {
  ojson out = close == '}' ? ojson::object() : ojson::array();
  skip_space(s);
  if (s.starts_with(close)) {
    s.remove_prefix(1);
    return out;
  }
  for (;;) {
    if (close == '}') {
      auto key = word(s, ":");
      if (!key || !s.starts_with(':')) return std::nullopt;
      s.remove_prefix(1);
      auto v = value(s, depth + 1);
      if (!v) return std::nullopt;
      out[*key] = std::move(*v);
    } else {
      auto v = value(s, depth + 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
    }
    skip_space(s);
    if (s.starts_with(close)) {
      s.remove_prefix(1);
      return out;
    }
    if (!s.starts_with(',')) return std::nullopt;
    s.remove_prefix(1);
  }
}

std::optional<ojson> value(std::string_view& s, int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  skip_space(s);
  if (s.starts_with('{') || s.starts_with('[')) {
    const char close = s.front() == '{' ? '}' : ']';
    s.remove_prefix(1);
    return container(s, close, depth);
  }
  const bool quoted = s.starts_with(kQuote);
  auto text = word(s, ",}]");
  if (!text) return std::nullopt;
  if (quoted) return ojson(std::move(*text));
  auto literal = parse_json(*text);  // a number, true, false or null
  if (!literal || literal->is_string() || literal->is_structured()) return std::nullopt;
  return literal;
}

std::optional<std::vector<ToolCall>> parse_gemma4(std::string_view body, const ToolNames& known) {
  body = trim(body);
  if (!body.starts_with("call:")) return std::nullopt;
  body.remove_prefix(5);
  const size_t brace = body.find('{');
  if (brace == std::string_view::npos) return std::nullopt;
  const auto name = trim(body.substr(0, brace));
  body.remove_prefix(brace);
  auto arguments = value(body, 0);
  if (!arguments || !arguments->is_object() || !is_blank(body)) return std::nullopt;
  return single_call(name, *arguments, known);
}

}  // namespace

CallSyntax gemma4_syntax() {
  return {{{"<|tool_call>", "<tool_call|>"}}, parse_gemma4};
}

}  // namespace heron::chat_output
