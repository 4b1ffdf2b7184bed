#pragma once
// How one family of models writes tool calls into its text: the markers that open a call,
// what closes it, and how the text between becomes calls. One function per family, each
// in its own file; output_format.h picks one from the chat template.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heron/chat_output/tool_call.h"

namespace heron::chat_output {

struct CallMarker {
  std::string open;
  std::string close;               // empty: the call runs to the end of the output
  bool answer_start_only = false;  // only where the answer begins (a bare JSON call)
  bool open_in_body = false;       // the opening text belongs to the call's text ("{")
};

// The text of one call (between open and close) -> its calls; nullopt when it is not a
// valid call of a known tool, so the text stays content.
using CallParser =
    std::function<std::optional<std::vector<ToolCall>>(std::string_view body, const ToolNames&)>;

struct CallSyntax {
  std::vector<CallMarker> markers;
  CallParser parse;
};

// Hermes / Qwen: <tool_call>{"name": .., "arguments": {..}}</tool_call>, one per call.
CallSyntax hermes_syntax();
// Llama 3.x: {"name": .., "parameters": {..}} as the whole answer, or after <|python_tag|>;
// several calls are separated by ';'.
CallSyntax llama3_syntax();
// Mistral: [TOOL_CALLS][{"name": .., "arguments": {..}}, ..], or the newer
// [TOOL_CALLS]name[ARGS]{..} repeated per call.
CallSyntax mistral_syntax();

// Qwen3-Coder / Qwen3.5 / Nemotron 3: <tool_call>\n<function=NAME>\n<parameter=K>\nV\n
// </parameter>\n</function>\n</tool_call>.
CallSyntax qwen3_coder_syntax();
// GLM-4.5+: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>.
CallSyntax glm_syntax();
// DeepSeek V3 / R1 / V3.1: <｜tool▁calls▁begin｜> ... <｜tool▁calls▁end｜> around
// <｜tool▁call▁begin｜>...<｜tool▁call▁end｜> per call.
CallSyntax deepseek_syntax();
// Gemma 4: <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>.
CallSyntax gemma4_syntax();

}  // namespace heron::chat_output
