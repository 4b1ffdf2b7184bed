#include "heron/api/generation_params.h"

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::api {

using http::get_int;
using http::get_number;

void read_ollama_options(const nlohmann::json& o, const std::string& prefix, GenerationParams& p) {
  auto& s = p.sampling;
  auto name = [&](const char* key) { return prefix + key; };
  auto f = [](double x) { return static_cast<float>(x); };
  if (auto v = get_number(o, "temperature", name("temperature"), 0, 1e6)) s.temperature = f(*v);
  if (auto v = get_int(o, "top_k", name("top_k"), 0, kMaxTopK)) s.top_k = static_cast<int>(*v);
  if (auto v = get_number(o, "top_p", name("top_p"), 0, 1)) {
    if (*v <= 0) throw http::bad_request(name("top_p") + " must be greater than 0 and at most 1");
    s.top_p = f(*v);
  }
  if (auto v = get_number(o, "min_p", name("min_p"), 0, 1)) s.min_p = f(*v);
  if (auto v = get_number(o, "repeat_penalty", name("repeat_penalty"), 0, 1e6)) {
    if (*v <= 0) throw http::bad_request(name("repeat_penalty") + " must be greater than 0");
    s.repeat_penalty = f(*v);
  }
  if (auto v = get_int(o, "repeat_last_n", name("repeat_last_n"), -1, 1 << 30)) {
    s.repeat_last_n = static_cast<int>(*v);
  }
  if (auto v = get_number(o, "presence_penalty", name("presence_penalty"), -1e6, 1e6)) {
    s.presence_penalty = f(*v);
  }
  if (auto v = get_number(o, "frequency_penalty", name("frequency_penalty"), -1e6, 1e6)) {
    s.frequency_penalty = f(*v);
  }
  if (auto v = get_int(o, "seed", name("seed"), INT64_MIN, INT64_MAX)) {
    s.seed = static_cast<uint64_t>(*v);
  }
  if (auto v = get_int(o, "num_predict", name("num_predict"), -2, kMaxNumPredict)) {
    p.num_predict = static_cast<int>(*v);
  }
  if (auto v = get_int(o, "num_ctx", name("num_ctx"), 1, kMaxNumCtx))
    p.num_ctx = static_cast<int>(*v);
  if (auto v = http::get_strings(o, "stop", name("stop"))) p.stop = *v;
  if (auto v = http::get_bool(o, "logprobs", name("logprobs"))) p.logprobs.enabled = *v;
  if (auto v = http::get_bool(o, "speculation", name("speculation"))) p.speculation = *v;
  if (auto v =
          get_int(o, "top_logprobs", name("top_logprobs"), 0, sample::LogprobOptions::kMaxTop)) {
    p.logprobs.top = static_cast<int>(*v);
  }
}

nlohmann::json to_ollama_options(const GenerationParams& p) {
  const auto& s = p.sampling;
  nlohmann::json o = {
      {"temperature", s.temperature},
      {"top_k", s.top_k},
      {"top_p", s.top_p},
      {"min_p", s.min_p},
      {"repeat_penalty", s.repeat_penalty},
      {"repeat_last_n", s.repeat_last_n},
      {"presence_penalty", s.presence_penalty},
      {"frequency_penalty", s.frequency_penalty},
      {"num_predict", p.num_predict},
      {"stop", p.stop},
      {"logprobs", p.logprobs.enabled},
      {"top_logprobs", p.logprobs.top},
      {"speculation", p.speculation},
  };
  if (s.seed) o["seed"] = static_cast<int64_t>(*s.seed);
  if (p.num_ctx > 0) o["num_ctx"] = p.num_ctx;
  return o;
}

}  // namespace heron::api
