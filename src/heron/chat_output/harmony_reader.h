#pragma once
// gpt-oss's harmony format: the answer is a run of messages,
//   [<|start|>assistant]<|channel|>CHANNEL[ to=functions.NAME][ <|constrain|>json]<|message|>
//   BODY<|end|> (or <|call|>, <|return|>, the next <|start|>, or the end of the output),
// where the "analysis" channel is reasoning, "final" (and "commentary" to no one) the
// answer, and a message to functions.NAME a call whose body is its JSON arguments.
// OutputSplitter hands such output here; the events are the same kinds.
#include <string>
#include <string_view>
#include <vector>

#include "heron/chat_output/tool_call.h"

namespace heron::chat_output {

struct OutputEvent;

class HarmonyReader {
 public:
  explicit HarmonyReader(ToolNames tools) : tools_(std::move(tools)) {}
  // Appends what `text` settles to `out`; `final`: the output has ended.
  void feed(std::string_view text, bool final, std::vector<OutputEvent>& out);

 private:
  enum class Target { Thinking, Content, Call };
  bool header(bool final, std::vector<OutputEvent>& out);  // true when a body begins
  bool body(bool final, std::vector<OutputEvent>& out);    // true when it ended

  ToolNames tools_;
  std::string buf_;
  bool in_body_ = false;
  Target target_ = Target::Content;
  std::string header_;     // the message's header as written (a failed call shows it)
  std::string recipient_;  // the function a call goes to
};

}  // namespace heron::chat_output
