// DeepSeek V3 and R1: special tokens around each call, its arguments in a JSON code block:
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{..}\n```
// <｜tool▁call▁end｜>...<｜tool▁calls▁end｜>. V3.1 writes NAME<｜tool▁sep｜>{..} instead.
#include "heron/chat_output/call_syntax.h"
#include "heron/chat_output/space.h"

namespace heron::chat_output {

namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
std::optional<ToolCall> one_call(std::string_view call, const ToolNames& known) {
  const size_t sep = call.find(kSep);
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view name = trim(call.substr(0, sep));
  std::string_view args = call.substr(sep + kSep.size());
  if (name == "function") {  // V3: the type, then NAME and a ```json block
    const size_t fence = args.find("```json");
    if (fence == std::string_view::npos) return std::nullopt;
    name = trim(args.substr(0, fence));
    args = trim(args.substr(fence + 7));
    if (!args.ends_with("```")) return std::nullopt;
    args.remove_suffix(3);
  }
  auto arguments = parse_json(args);
  if (!arguments) return std::nullopt;
  return make_call(nlohmann::ordered_json(std::string(name)), &*arguments, known);
}

std::optional<std::vector<ToolCall>> parse_deepseek(std::string_view body, const ToolNames& known) {
  std::vector<ToolCall> calls;
  for (body = trim(body); !body.empty(); body = trim(body)) {
    if (!body.starts_with(kCallBegin)) return std::nullopt;
    const size_t end = body.find(kCallEnd);
    if (end == std::string_view::npos) return std::nullopt;
    auto call = one_call(body.substr(kCallBegin.size(), end - kCallBegin.size()), known);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    body.remove_prefix(end + kCallEnd.size());
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

}  // namespace

CallSyntax deepseek_syntax() {
  return {{{std::string(kCallsBegin), std::string(kCallsEnd)}}, parse_deepseek};
}

}  // namespace heron::chat_output
