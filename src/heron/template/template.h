#pragma once
// Chat templates: a Jinja2 engine that renders models' chat templates byte-for-byte like
// Python jinja2 in the environment Hugging Face transformers builds (sandboxed,
// trim_blocks, lstrip_blocks, loopcontrols, the `generation` tag, raise_exception,
// strftime_now, dict, namespace and transformers' tojson).
//
//   auto tpl = heron::chat::Template::parse(tokenizer.chat_template());
//   std::string prompt = tpl.render(context);
//
// The context holds what transformers passes: messages, tools and documents (null when
// absent — transformers passes None, which templates can tell apart from undefined),
// add_generation_prompt, bos_token, eos_token, and extra keys such as enable_thinking.
// Use nlohmann::ordered_json to keep the caller's key order (tojson prints it); plain
// nlohmann::json sorts keys (and is copied into an ordered_json first). Every failure (syntax,
// runtime, raise_exception, limits) is a heron::Error naming the template line and column.
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace heron::chat {

namespace jinja {
struct Program;
}

struct RenderOptions {
  size_t max_output_bytes = size_t{64} << 20;  // the output and every string built on the way
  uint64_t max_steps = 2'000'000;              // loop iterations plus macro calls
  int max_recursion_depth = 200;               // nested macro calls / recursive loops
  std::optional<std::tm> now;                  // strftime_now's clock; local time when unset
};

class Template {
 public:
  // Throws heron::Error on a syntax error (or an unknown filter/test outside `if`).
  static Template parse(const std::string& source);

  std::string render(const nlohmann::ordered_json& context,
                     const RenderOptions& options = {}) const;
  std::string render(const nlohmann::json& context, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const jinja::Program> program_;
};

}  // namespace heron::chat
