#include "heron/server/ollama_request.h"

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/server/response_format.h"

namespace heron::server {

namespace {

void reject_unsupported(const nlohmann::json& body) {
  if (auto v = http::get_string(body, "suffix", "suffix"); v && !v->empty()) {
    throw http::bad_request("suffix (fill-in-the-middle) is not supported yet");
  }
  if (const auto* v = http::field(body, "images"); v && !(v->is_array() && v->empty())) {
    throw http::bad_request("images are not supported: heron's models take text only");
  }
}

}  // namespace

OllamaRequest parse_ollama_request(const nlohmann::json& body, std::string_view raw_body,
                                   const ServerContext& ctx) {
  OllamaRequest r;
  reject_unsupported(body);
  const auto format = read_ollama_format(body, raw_body);
  auto name = http::get_string(body, "model", "model");
  if (!name || name->empty()) throw http::bad_request("model is required");
  const auto* options = http::get_object(body, "options", "options");
  // Ollama's documented defaults (docs/modelfile.md PARAMETER), then the model's own
  // PARAMETERs, then the request's options.
  auto fill_options = [&](const nlohmann::json& model_options) {
    r.params = {};
    auto& s = r.params.sampling;
    s.temperature = 0.8f;
    s.top_k = 40;
    s.top_p = 0.9f;
    s.min_p = 0.0f;
    s.repeat_penalty = 1.1f;
    s.repeat_last_n = 64;
    api::read_ollama_options(model_options, "model parameter ", r.params);
    if (options) api::read_ollama_options(*options, "options.", r.params);
  };
  fill_options(nlohmann::json::object());  // validates the request before the model is known
  if (auto v = http::get_bool(body, "logprobs", "logprobs")) r.params.logprobs.enabled = *v;
  if (auto v =
          http::get_int(body, "top_logprobs", "top_logprobs", 0, sample::LogprobOptions::kMaxTop)) {
    r.params.logprobs.top = static_cast<int>(*v);
  }
  r.stream = http::get_bool(body, "stream", "stream").value_or(true);
  r.keep_alive = ctx.default_keep_alive;
  if (const auto* k = http::field(body, "keep_alive"))
    r.keep_alive = parse_keep_alive(*k, "keep_alive");
  r.model = ctx.resolver.resolve(*name);  // last: a bad request is a 400 even for an unknown model
  if (!r.model.options.empty()) {
    const auto logprobs = r.params.logprobs;
    fill_options(r.model.options);
    r.params.logprobs = logprobs;
  }
  r.params.format = format;
  return r;
}

}  // namespace heron::server
