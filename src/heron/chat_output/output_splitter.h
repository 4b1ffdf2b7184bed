#pragma once
// Splits a model's output, as it streams, into reasoning, answer text and tool calls; both
// APIs use it, streaming or not. Text is held back only while it could still be the start
// of a marker (<think>, </think>, a call's opening) or a call that has not closed; a call
// whose text is not a valid call of a known tool goes out as content, exactly as written.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heron/chat_output/harmony_reader.h"
#include "heron/chat_output/output_format.h"

namespace heron::chat_output {

struct OutputEvent {
  enum class Kind { Thinking, Content, Call };
  Kind kind = Kind::Content;
  std::string text;  // Thinking, Content
  ToolCall call;     // Call
  bool operator==(const OutputEvent&) const = default;
};

class OutputSplitter {
 public:
  // `tools` empty: no calls are looked for (a request without tools).
  OutputSplitter(const OutputFormat& format, ToolNames tools);
  // What `text` (the next piece of output) settles; adjacent text of a kind is merged.
  std::vector<OutputEvent> feed(std::string_view text);
  // End of output: everything still held (an unclosed call is parsed as it stands).
  std::vector<OutputEvent> finish();

 private:
  enum class State { Start, Thinking, Content, Call };
  void run(bool final);
  bool start(bool final);  // each returns true when the state changed and work remains
  bool thinking(bool final);
  bool content(bool final);
  bool call(bool final);
  void end_call(std::string_view body, std::string_view close);
  void emit(OutputEvent::Kind kind, std::string_view text);
  void emit_content(std::string_view text);
  bool drop_leading_space();  // false when nothing else is left

  ToolNames tools_;
  std::string_view think_open_, think_close_;  // string literals: OutputFormat's markers
  CallSyntax syntax_;
  State state_;
  std::string buf_;               // output not yet settled
  bool skip_space_ = false;       // drop whitespace here (after <think>, </think>, a call)
  bool content_started_ = false;  // some non-space content has gone out
  bool called_ = false;           // a call has gone out
  size_t marker_ = 0;             // in a call: which of syntax_.markers opened it
  std::vector<OutputEvent> out_;
  std::optional<HarmonyReader> harmony_;  // gpt-oss output: read by channel instead
};

// The whole output at once, for answers that do not stream.
struct SplitOutput {
  std::string thinking;
  std::string content;
  std::vector<ToolCall> calls;
};
SplitOutput split_output(const OutputFormat& format, ToolNames tools, std::string_view text);

}  // namespace heron::chat_output
