#include "heron/server/openai_request.h"

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/server/response_format.h"

namespace heron::server {

using http::bad_request;

namespace {

void reject_unsupported(const nlohmann::json& body, bool legacy) {
  if (auto n = http::get_int(body, "n", "n", 1, INT32_MAX); n && *n != 1) {
    throw bad_request("n must be 1: heron generates one choice per request");
  }
  if (auto n = http::get_int(body, "best_of", "best_of", 1, INT32_MAX); n && *n != 1) {
    throw bad_request("best_of must be 1");
  }
  if (const auto* v = http::field(body, "tools"); legacy && v && !(v->is_array() && v->empty())) {
    throw bad_request("tools need /v1/chat/completions");
  }
  if (http::get_bool(body, "echo", "echo").value_or(false))
    throw bad_request("echo is not supported");
  if (auto s = http::get_string(body, "suffix", "suffix"); s && !s->empty()) {
    throw bad_request("suffix is not supported yet");
  }
}

}  // namespace

OpenAIRequest parse_openai_request(const nlohmann::json& body, std::string_view raw_body,
                                   const ServerContext& ctx, bool legacy) {
  OpenAIRequest r;
  reject_unsupported(body, legacy);
  const auto format = read_openai_response_format(body, raw_body);
  auto name = http::get_string(body, "model", "model");
  if (!name || name->empty()) throw bad_request("model is required");
  // Read once to validate before the model is known (a bad request is a 400 even for an
  // unknown model), again on top of the model's defaults.
  auto fill = [&](const nlohmann::json& model_options) {
    r.params = {};
    auto& p = r.params;
    auto& s = p.sampling;
    // OpenAI's defaults: plain sampling at temperature 1, no repetition penalty.
    s.temperature = 1.0f;
    s.repeat_penalty = 1.0f;
    // A store model's PARAMETERs replace those defaults; the request's fields win.
    api::read_ollama_options(model_options, "model parameter ", p);
    auto f = [](double x) { return static_cast<float>(x); };
    if (auto v = http::get_number(body, "temperature", "temperature", 0, 2)) s.temperature = f(*v);
    if (auto v = http::get_number(body, "top_p", "top_p", 0, 1)) {
      if (*v <= 0) throw bad_request("top_p must be greater than 0 and at most 1");
      s.top_p = f(*v);
    }
    if (auto v = http::get_number(body, "presence_penalty", "presence_penalty", -2, 2)) {
      s.presence_penalty = f(*v);
    }
    if (auto v = http::get_number(body, "frequency_penalty", "frequency_penalty", -2, 2)) {
      s.frequency_penalty = f(*v);
    }
    if (s.presence_penalty != 0 || s.frequency_penalty != 0) s.repeat_last_n = -1;  // whole context
    if (auto v = http::get_int(body, "seed", "seed", INT64_MIN, INT64_MAX))
      s.seed = static_cast<uint64_t>(*v);
    if (auto v = http::get_int(body, "max_tokens", "max_tokens", 1, api::kMaxNumPredict))
      p.num_predict = static_cast<int>(*v);
    if (auto v = http::get_int(body, "max_completion_tokens", "max_completion_tokens", 1,
                               api::kMaxNumPredict)) {
      p.num_predict = static_cast<int>(*v);
    }
    if (auto v = http::get_strings(body, "stop", "stop")) {
      if (v->size() > 4) throw bad_request("stop may hold at most 4 sequences");
      p.stop = *v;
    }
    if (legacy) {
      if (auto v = http::get_int(body, "logprobs", "logprobs", 0, 5)) {
        p.logprobs = {true, static_cast<int>(*v)};
      }
    } else {
      p.logprobs.enabled = http::get_bool(body, "logprobs", "logprobs").value_or(false);
      if (auto v = http::get_int(body, "top_logprobs", "top_logprobs", 0,
                                 sample::LogprobOptions::kMaxTop)) {
        if (!p.logprobs.enabled) throw bad_request("top_logprobs requires logprobs to be true");
        p.logprobs.top = static_cast<int>(*v);
      }
    }
    r.stream = http::get_bool(body, "stream", "stream").value_or(false);
    if (const auto* so = http::get_object(body, "stream_options", "stream_options")) {
      r.include_usage =
          http::get_bool(*so, "include_usage", "stream_options.include_usage").value_or(false);
    }
  };
  fill(nlohmann::json::object());
  r.model = ctx.resolver.resolve(*name);
  if (!r.model.options.empty()) fill(r.model.options);
  r.params.format = format;
  return r;
}

}  // namespace heron::server
