#include "heron/chat_output/output_format.h"

namespace heron::chat_output {

namespace {

bool has(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

ToolSyntax detect_tools(std::string_view t) {
  if (has(t, "<tool_call>")) {
    if (has(t, "<arg_key>")) return ToolSyntax::Glm;
    if (has(t, "<function=")) return ToolSyntax::Qwen3Coder;
    return ToolSyntax::Hermes;
  }
  // 3.1 writes <|python_tag|>; 3.2/3.3 only describe the JSON object.
  if (has(t, "<|python_tag|>") || (has(t, "<|start_header_id|>") && has(t, "\"parameters\""))) {
    return ToolSyntax::Llama3;
  }
  if (has(t, "[TOOL_CALLS]")) return ToolSyntax::Mistral;
  if (has(t, "<｜tool▁calls▁begin｜>")) return ToolSyntax::DeepSeek;
  if (has(t, "<|channel|>")) return ToolSyntax::Harmony;
  if (has(t, "<|tool_call>")) return ToolSyntax::Gemma4;
  return ToolSyntax::None;
}

}  // namespace

OutputFormat detect_output_format(std::string_view template_source, std::string_view prompt) {
  OutputFormat f;
  f.tools = detect_tools(template_source);
  if (has(template_source, "<|channel>") && has(template_source, "<channel|>")) {
    f.thinks = true;
    f.think_open = "<|channel>thought";
    f.think_close = "<channel|>";
  } else {
    f.thinks = has(template_source, "<think>") || has(template_source, "</think>");
  }
  if (f.thinks) {
    const size_t end = prompt.find_last_not_of(" \t\r\n");
    f.starts_in_thinking =
        end != std::string_view::npos && prompt.substr(0, end + 1).ends_with(f.think_open);
  }
  return f;
}

CallSyntax call_syntax(ToolSyntax tools) {
  switch (tools) {
    case ToolSyntax::Hermes:
      return hermes_syntax();
    case ToolSyntax::Llama3:
      return llama3_syntax();
    case ToolSyntax::Mistral:
      return mistral_syntax();
    case ToolSyntax::Qwen3Coder:
      return qwen3_coder_syntax();
    case ToolSyntax::Glm:
      return glm_syntax();
    case ToolSyntax::DeepSeek:
      return deepseek_syntax();
    case ToolSyntax::Gemma4:
      return gemma4_syntax();
    case ToolSyntax::Harmony:  // read by HarmonyReader, not by markers
    case ToolSyntax::None:
      break;
  }
  return {};
}

}  // namespace heron::chat_output
