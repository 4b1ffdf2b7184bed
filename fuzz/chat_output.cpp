// A model's output as the server reads it back (chat_output/): arbitrary text in arbitrary
// pieces through every tool-call syntax, with and without thinking. Streaming must settle
// what the whole text settles, and every call must name a known tool with object arguments.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "heron/chat_output/output_format.h"
#include "heron/chat_output/output_splitter.h"

using namespace heron::chat_output;

namespace {

// The events as a client assembles them: adjacent text of one kind joined.
void append(std::vector<OutputEvent>& all, std::vector<OutputEvent> more) {
  for (auto& e : more) {
    if (e.kind != OutputEvent::Kind::Call && !all.empty() && all.back().kind == e.kind) {
      all.back().text += e.text;
    } else {
      all.push_back(std::move(e));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // First byte: the syntax (4 bits), thinking, starting inside it, and the piece size.
  const uint8_t b = data[0];
  constexpr int kSyntaxes = static_cast<int>(ToolSyntax::Gemma4) + 1;
  const auto syntax = static_cast<ToolSyntax>((b & 15) % kSyntaxes);
  const OutputFormat format{syntax, (b & 16) != 0, (b & 48) == 48};
  const size_t piece = 1 + (b >> 6);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const ToolNames tools = {"get_weather", "f"};

  (void)detect_output_format(text, text);  // the text as a template and as a prompt

  std::vector<OutputEvent> whole;
  OutputSplitter one(format, tools);
  append(whole, one.feed(text));
  append(whole, one.finish());

  std::vector<OutputEvent> streamed;
  OutputSplitter pieces(format, tools);
  for (size_t at = 0; at < text.size(); at += piece)
    append(streamed, pieces.feed(text.substr(at, piece)));
  append(streamed, pieces.finish());

  if (streamed != whole) std::abort();
  for (const auto& e : whole) {
    if (e.kind != OutputEvent::Kind::Call) continue;
    if (!tools.contains(e.call.name) || !e.call.arguments.is_object()) std::abort();
    (void)nlohmann::json::parse(e.call.arguments_json());  // what both APIs send
  }
  return 0;
}
