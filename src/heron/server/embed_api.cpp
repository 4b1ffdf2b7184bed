#include "heron/server/embed_api.h"

#include <httplib.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/server/capabilities.h"
#include "heron/server/context.h"
#include "heron/server/openai_api.h"
#include "heron/server/runner_call.h"
#include "heron/server/time_format.h"

namespace heron::server {

namespace {

using json = nlohmann::json;
using Vectors = std::vector<std::vector<float>>;

struct Embedded {
  Vectors vectors;
  int64_t tokens = 0;
  double load_seconds = 0;
};

// The first `dimensions` values of each vector, L2-normalized again (Ollama's and
// OpenAI's meaning for models trained to be cut, Matryoshka style).
void shorten(Vectors& vectors, int64_t dimensions, size_t length) {
  if (dimensions < 1 || static_cast<size_t>(dimensions) > length) {
    throw http::bad_request("dimensions must be between 1 and the model's " +
                            std::to_string(length));
  }
  for (auto& v : vectors) {
    v.resize(static_cast<size_t>(dimensions));
    double sum = 0;
    for (float x : v) sum += static_cast<double>(x) * x;
    const double norm = std::max(std::sqrt(sum), 1e-12);
    for (float& x : v) x = static_cast<float>(x / norm);
  }
}

// `inputs`: the runner's /embed input array (texts or token id arrays).
Embedded embed(ServerContext& ctx, const ResolvedModel& model, KeepAlive keep_alive,
               const json& inputs, bool truncate, std::optional<int64_t> dimensions) {
  auto lease = ctx.pool.acquire(model, keep_alive);
  const auto& status = lease->status();
  require_embedding(status, model.name);
  Embedded out;
  out.load_seconds = lease->load_seconds();
  if (inputs.empty()) return out;  // loads the model, as Ollama does
  const json answer = call_runner(*lease, "/embed", {{"input", inputs}, {"truncate", truncate}});
  out.vectors = answer.at("embeddings").get<Vectors>();
  out.tokens = answer.value("prompt_eval_count", int64_t{0});
  if (dimensions) shorten(out.vectors, *dimensions, status.value("embedding_length", size_t{0}));
  return out;
}

KeepAlive keep_alive_of(const json& body, const ServerContext& ctx) {
  const auto* k = http::field(body, "keep_alive");
  return k ? parse_keep_alive(*k, "keep_alive") : ctx.default_keep_alive;
}

std::string model_of(const json& body) {
  auto name = http::get_string(body, "model", "model");
  if (!name || name->empty()) throw http::bad_request("model is required");
  return *name;
}

// Ollama: {"model", "input": text or [texts], "truncate", "dimensions", "keep_alive",
// "options"} -> {"model", "embeddings", "total_duration", "load_duration",
// "prompt_eval_count"}.
void ollama_embed(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  const auto body = http::parse_body(req.body);
  const auto name = model_of(body);
  json inputs = json::array();
  if (const auto* input = http::field(body, "input"); input && !input->is_null()) {
    if (input->is_string()) {
      inputs.push_back(*input);
    } else if (input->is_array() && std::all_of(input->begin(), input->end(),
                                                [](const json& i) { return i.is_string(); })) {
      inputs = *input;
    } else {
      throw http::bad_request("input must be a string or an array of strings");
    }
  }
  const bool truncate = http::get_bool(body, "truncate", "truncate").value_or(true);
  const auto dimensions = http::get_int(body, "dimensions", "dimensions", 1, 1 << 20);
  http::get_object(body, "options", "options");  // checked; an encoder has no sampling options
  const auto keep_alive = keep_alive_of(body, ctx);
  const auto model = ctx.resolver.resolve(name);
  const auto e = embed(ctx, model, keep_alive, inputs, truncate, dimensions);
  http::send_json(res, {{"model", model.name},
                        {"embeddings", e.vectors},
                        {"total_duration", nanos_since(t0)},
                        {"load_duration", static_cast<int64_t>(e.load_seconds * 1e9)},
                        {"prompt_eval_count", e.tokens}});
}

// Ollama's older endpoint: {"model", "prompt", "keep_alive", "options"} -> {"embedding"};
// an empty prompt only loads the model.
void ollama_embeddings(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto body = http::parse_body(req.body);
  const auto name = model_of(body);
  const auto prompt = http::get_string(body, "prompt", "prompt").value_or("");
  http::get_object(body, "options", "options");
  const auto keep_alive = keep_alive_of(body, ctx);
  const auto model = ctx.resolver.resolve(name);
  json inputs = json::array();
  if (!prompt.empty()) inputs.push_back(prompt);
  const auto e = embed(ctx, model, keep_alive, inputs, true, std::nullopt);
  http::send_json(res, {{"embedding", e.vectors.empty() ? std::vector<float>{} : e.vectors[0]}});
}

std::string base64_floats(const std::vector<float>& v) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());  // little-endian, as OpenAI sends
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t chunk = 0;
    for (size_t k = 0; k < 3; ++k) {
      chunk = (chunk << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out += k <= n ? kDigits[(chunk >> (18 - 6 * k)) & 0x3F] : '=';
    }
  }
  return out;
}

// OpenAI's input: a text, texts, token ids, or arrays of token ids; never empty.
json openai_inputs(const json& body) {
  const auto* input = http::field(body, "input");
  if (!input || input->is_null()) throw http::bad_request("input is required");
  if (input->is_string()) return json::array({*input});
  if (!input->is_array() || input->empty()) {
    throw http::bad_request(
        "input must be a string, an array of strings, an array of token ids "
        "or an array of such arrays, and not empty");
  }
  if (std::all_of(input->begin(), input->end(),
                  [](const json& i) { return i.is_number_integer(); })) {
    return json::array({*input});
  }
  for (const auto& i : *input) {
    if (!i.is_string() && !i.is_array()) {
      throw http::bad_request("input must not mix token ids with texts or arrays");
    }
  }
  return *input;
}

// OpenAI: {"model", "input", "encoding_format", "dimensions", "user"} -> {"object": "list",
// "data": [{"object": "embedding", "index", "embedding"}], "model", "usage"}.
void openai_embeddings(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto body = http::parse_body(req.body);
  const auto name = model_of(body);
  const auto inputs = openai_inputs(body);
  const auto format =
      http::get_string(body, "encoding_format", "encoding_format").value_or("float");
  if (format != "float" && format != "base64") {
    throw http::bad_request("encoding_format must be 'float' or 'base64'");
  }
  const auto dimensions = http::get_int(body, "dimensions", "dimensions", 1, 1 << 20);
  http::get_string(body, "user", "user");
  const auto model = ctx.resolver.resolve(name);
  const auto e = embed(ctx, model, ctx.default_keep_alive, inputs, true, dimensions);
  json data = json::array();
  for (size_t i = 0; i < e.vectors.size(); ++i) {
    json embedding = format == "base64" ? json(base64_floats(e.vectors[i])) : json(e.vectors[i]);
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(embedding)}});
  }
  http::send_json(res, {{"object", "list"},
                        {"data", std::move(data)},
                        {"model", model.name},
                        {"usage", {{"prompt_tokens", e.tokens}, {"total_tokens", e.tokens}}}});
}

}  // namespace

void install_embed_routes(httplib::Server& server, ServerContext& ctx) {
  auto bind = [&ctx](void (*f)(const httplib::Request&, httplib::Response&, ServerContext&),
                     http::ErrorWriter write_error) {
    return http::guarded(
        [&ctx, f](const httplib::Request& req, httplib::Response& res) { f(req, res, ctx); },
        std::move(write_error));
  };
  server.Post("/api/embed", bind(ollama_embed, http::send_error));
  server.Post("/api/embeddings", bind(ollama_embeddings, http::send_error));
  server.Post("/v1/embeddings", bind(openai_embeddings, send_openai_error));
}

}  // namespace heron::server
