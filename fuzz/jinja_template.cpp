// Jinja parse + render. Input: template source, optionally followed by a NUL and the
// JSON context; without one (or with bad JSON) a two-message chat is rendered.
#include <ctime>

#include "fuzz_file.h"
#include "heron/core/error.h"
#include "heron/template/template.h"

namespace {

nlohmann::ordered_json default_context() {
  return nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Hi <b>&</b> \u00e9"}],
    "tools": null, "documents": null, "add_generation_prompt": true,
    "bos_token": "<s>", "eos_token": "</s>"})");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [source, context_text] = heron::fuzz::split_at_nul(data, size);
  auto context = nlohmann::ordered_json::parse(context_text, nullptr, /*allow_exceptions=*/false);
  if (!context.is_object()) context = default_context();
  heron::chat::RenderOptions options;
  // Small limits keep each run fast; the limit checks themselves are what is exercised.
  options.max_output_bytes = 1 << 20;
  options.max_steps = 100'000;
  options.max_recursion_depth = 50;
  options.now = std::tm{};
  try {
    heron::chat::Template::parse(source).render(context, options);
  } catch (const heron::Error&) {
  }
  return 0;
}
