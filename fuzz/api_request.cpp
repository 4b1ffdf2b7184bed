// API request parsing: one body through every reader the Ollama and OpenAI handlers run
// before a runner is involved (messages, options, keep_alive, OpenAI fields).
#include <filesystem>

#include "heron/core/error.h"
#include "heron/http/json_fields.h"
#include "heron/server/chat_input.h"
#include "heron/server/ollama_request.h"
#include "heron/server/openai_request.h"

namespace {

using heron::server::ResolvedModel;

// Every name resolves: the parsers, not the model lookup, are under test.
class AnyModel : public heron::server::ModelResolver {
 public:
  ResolvedModel resolve(const std::string& name) const override { return {name, "/nonexistent"}; }
  std::vector<ResolvedModel> list() const override { return {}; }
};

template <class F>
void run(F&& f) {
  try {
    f();
  } catch (const heron::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static AnyModel resolver;
  static heron::server::RunnerPool pool({"/nonexistent", 1, 0, std::chrono::seconds(1)});
  static heron::server::ServerContext ctx{pool, resolver, {}};
  const std::string text(reinterpret_cast<const char*>(data), size);
  run([&] { heron::server::parse_chat_input(text); });
  nlohmann::json body;
  try {
    body = heron::http::parse_body(text);
  } catch (const heron::Error&) {
    return 0;
  }
  run([&] { heron::server::parse_ollama_request(body, text, ctx); });
  run([&] { heron::server::parse_openai_request(body, text, ctx, false); });
  run([&] { heron::server::parse_openai_request(body, text, ctx, true); });
  run([&] {
    heron::api::GenerationParams p;
    heron::api::read_ollama_options(body, "", p);
    heron::api::read_ollama_options(heron::api::to_ollama_options(p), "", p);
  });
  return 0;
}
