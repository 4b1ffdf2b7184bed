#pragma once
// Which output syntax a model writes, read from the chat template it was prompted with
// (never from the model's name: a fine-tune or a Modelfile TEMPLATE keeps or changes the
// syntax with the template). The template shows the exact markers its model was trained on.
#include <string_view>

#include "heron/chat_output/call_syntax.h"

namespace heron::chat_output {

// Harmony (gpt-oss) also carries the reasoning: its own channels, not <think>.
enum class ToolSyntax { None, Hermes, Llama3, Mistral, Qwen3Coder, Glm, DeepSeek, Harmony, Gemma4 };

struct OutputFormat {
  ToolSyntax tools = ToolSyntax::None;
  bool thinks = false;              // reasons between think_open and think_close
  bool starts_in_thinking = false;  // the prompt itself opened it
  // <think>...</think>, or Gemma 4's <|channel>thought ... <channel|>.
  std::string_view think_open = "<think>";
  std::string_view think_close = "</think>";
};

// Tool syntax, in priority order: <tool_call> (with <arg_key>: GLM; with <function=:
// Qwen3-Coder; else Hermes JSON), Llama 3's {"name", "parameters"}, Mistral's
// [TOOL_CALLS], DeepSeek's <｜tool▁calls▁begin｜>, gpt-oss's <|channel|>, Gemma 4's <|tool_call>.
// Thinking: the template mentions <think> (or Gemma 4's <|channel> and <channel|>);
// `prompt` (the rendered one) ending in the opening marker means the answer begins inside it.
OutputFormat detect_output_format(std::string_view template_source, std::string_view prompt);

// The syntax's markers and parser; ToolSyntax::None has no markers.
CallSyntax call_syntax(ToolSyntax tools);

}  // namespace heron::chat_output
