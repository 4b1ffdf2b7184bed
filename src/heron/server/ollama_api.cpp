#include "heron/server/ollama_api.h"

#include <httplib.h>

#include <filesystem>

#include "heron/core/version.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/server/chat_messages.h"
#include "heron/server/completion_call.h"
#include "heron/server/logprob_format.h"
#include "heron/server/ollama_request.h"
#include "heron/server/prompt.h"
#include "heron/server/streaming.h"
#include "heron/server/time_format.h"

namespace heron::server {

namespace {

using json = nlohmann::json;

enum class Kind { Generate, Chat };

// The text of one piece in the API's shape: "response" or "message".
json body_for(Kind kind, const std::string& model, const std::string& text) {
  json j = {{"model", model}, {"created_at", rfc3339_now()}};
  if (kind == Kind::Generate) {
    j["response"] = text;
  } else {
    j["message"] = {{"role", "assistant"}, {"content", text}};
  }
  return j;
}

void add_stats(json& j, const json& final_line, const CompletionCall& call) {
  j["done"] = true;
  j["done_reason"] = final_line.value("done_reason", "stop");
  j["total_duration"] = nanos_since(call.started());
  j["load_duration"] = static_cast<int64_t>(call.load_seconds() * 1e9);
  for (const char* k :
       {"prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"}) {
    j[k] = final_line.value(k, 0);
  }
}

std::string ndjson(const json& j) {
  return http::dump(j) + "\n";
}

// Load only (empty prompt or messages), or unload with keep_alive 0: Ollama answers
// with done_reason "load" / "unload".
void load_or_unload(httplib::Response& res, ServerContext& ctx, const OllamaRequest& r, Kind kind) {
  json j = body_for(kind, r.model.name, "");
  if (!r.keep_alive.forever && r.keep_alive.duration.count() == 0) {
    ctx.pool.unload(r.model);
    j["done_reason"] = "unload";
  } else {
    ctx.pool.acquire(r.model, r.keep_alive);  // the lease ends here; keep_alive starts
    j["done_reason"] = "load";
  }
  j["done"] = true;
  http::send_json(res, j);
}

void respond(httplib::Response& res, std::shared_ptr<CompletionCall> call, const OllamaRequest& r,
             Kind kind) {
  const std::string model = r.model.name;
  if (!r.stream) {
    auto all = collect(*call);
    json j = body_for(kind, model, all.content);
    add_stats(j, all.final_line, *call);
    if (r.params.logprobs.enabled) j["logprobs"] = client_logprobs(all.logprobs);
    http::send_json(res, j);
    return;
  }
  auto format = [call, model, kind](const json& line) {
    json j = body_for(kind, model, line.value("content", ""));
    if (line.contains("logprobs")) j["logprobs"] = client_logprobs(line["logprobs"]);
    if (line.value("done", false)) {
      add_stats(j, line, *call);
    } else {
      j["done"] = false;
    }
    return ndjson(j);
  };
  auto format_error = [](int, const std::string& message) { return ndjson({{"error", message}}); };
  stream_completion(res, call, "application/x-ndjson", format, format_error);
}

void generate(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto prompt = http::get_string(body, "prompt", "prompt").value_or("");
  auto system = http::get_string(body, "system", "system");
  const bool raw = http::get_bool(body, "raw", "raw").value_or(false);
  auto r = parse_ollama_request(body, ctx);
  if (prompt.empty()) return load_or_unload(res, ctx, r, Kind::Generate);
  auto lease = ctx.pool.acquire(r.model, r.keep_alive);
  std::string text = prompt;
  if (!raw) {
    std::vector<chat::Message> messages;
    if (system) messages.push_back({"system", *system});
    messages.push_back({"user", prompt});
    text = render_chat(lease->status().value("chat_template", ""), messages, "prompt");
  }
  respond(res, std::make_shared<CompletionCall>(std::move(lease), text, r.params, t0), r,
          Kind::Generate);
}

void chat_handler(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto messages = parse_ollama_messages(body);
  if (const auto* v = http::field(body, "tools"); v && !(v->is_array() && v->empty())) {
    throw http::bad_request("tools are not supported yet");
  }
  auto r = parse_ollama_request(body, ctx);
  if (messages.empty()) return load_or_unload(res, ctx, r, Kind::Chat);
  auto lease = ctx.pool.acquire(r.model, r.keep_alive);
  auto text = render_chat(lease->status().value("chat_template", ""), messages, "messages");
  respond(res, std::make_shared<CompletionCall>(std::move(lease), text, r.params, t0), r,
          Kind::Chat);
}

json model_entry(const ResolvedModel& m) {
  std::error_code ec;
  const bool dir = std::filesystem::is_directory(m.path, ec);
  uintmax_t size = 0;
  if (dir) {
    for (const auto& f : std::filesystem::directory_iterator(m.path, ec)) {
      if (f.is_regular_file(ec)) size += f.file_size(ec);
    }
  } else {
    size = std::filesystem::file_size(m.path, ec);
  }
  return {{"name", m.name},
          {"model", m.name},
          {"modified_at", rfc3339_now()},
          {"size", size},
          {"digest", ""},
          {"details", {{"format", dir ? "safetensors" : "gguf"}, {"family", ""}}}};
}

void show(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  auto body = http::parse_body(req.body);
  auto name = http::get_string(body, "model", "model");
  if (!name) name = http::get_string(body, "name", "name");
  if (!name) throw http::bad_request("model is required");
  auto m = ctx.resolver.resolve(*name);
  auto entry = model_entry(m);
  http::send_json(res, {{"modelfile", "FROM " + m.path.string() + "\n"},
                        {"parameters", ""},
                        {"template", ""},
                        {"details", entry["details"]},
                        {"model_info", json::object()},
                        {"capabilities", {"completion"}},
                        {"modified_at", entry["modified_at"]}});
}

}  // namespace

void install_ollama_routes(httplib::Server& server, ServerContext& ctx) {
  auto bind = [&ctx](void (*f)(const httplib::Request&, httplib::Response&, ServerContext&)) {
    return http::guarded(
        [&ctx, f](const httplib::Request& req, httplib::Response& res) { f(req, res, ctx); });
  };
  server.Post("/api/generate", bind(generate));
  server.Post("/api/chat", bind(chat_handler));
  server.Post("/api/show", bind(show));
  server.Get("/api/tags",
             bind([](const httplib::Request&, httplib::Response& res, ServerContext& c) {
               auto models = json::array();
               for (const auto& m : c.resolver.list()) models.push_back(model_entry(m));
               http::send_json(res, {{"models", models}});
             }));
  server.Get("/api/ps", bind([](const httplib::Request&, httplib::Response& res, ServerContext& c) {
               http::send_json(res, c.pool.ps());
             }));
  server.Get("/api/version", [](const httplib::Request&, httplib::Response& res) {
    http::send_json(res, {{"version", version()}});
  });
  auto root = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("heron is running", "text/plain; charset=utf-8");
  };
  server.Get("/", root);
  // httplib answers HEAD through the GET handler without a body.
}

}  // namespace heron::server
