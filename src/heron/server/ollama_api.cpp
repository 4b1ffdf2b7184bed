#include "heron/server/ollama_api.h"

#include <httplib.h>

#include <utility>

#include "heron/chat_output/output_splitter.h"
#include "heron/core/version.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/server/chat_input.h"
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

// What one response object carries: answer text, reasoning and complete tool calls.
struct Reply {
  std::string content;
  std::string thinking;
  std::vector<chat_output::ToolCall> calls;
};

// How a chat answer is read back: the template's output syntax and the request's tools.
// Unset for raw prompts, whose text passes as it is.
struct Reading {
  chat_output::OutputFormat format;
  chat_output::ToolNames tools;
};

Reply reply_of(std::vector<chat_output::OutputEvent> events) {
  Reply r;
  for (auto& e : events) {
    switch (e.kind) {
      case chat_output::OutputEvent::Kind::Thinking:
        r.thinking += e.text;
        break;
      case chat_output::OutputEvent::Kind::Content:
        r.content += e.text;
        break;
      case chat_output::OutputEvent::Kind::Call:
        r.calls.push_back(std::move(e.call));
        break;
    }
  }
  return r;
}

// Ollama's message.tool_calls: arguments as an object.
json tool_calls_json(const std::vector<chat_output::ToolCall>& calls) {
  json out = json::array();
  for (const auto& c : calls) {
    out.push_back(
        {{"function", {{"name", c.name}, {"arguments", json::parse(c.arguments_json())}}}});
  }
  return out;
}

// One piece in the API's shape: "response" (+ "thinking") or "message".
json body_for(Kind kind, const std::string& model, const Reply& r) {
  json j = {{"model", model}, {"created_at", rfc3339_now()}};
  if (kind == Kind::Generate) {
    j["response"] = r.content;
    if (!r.thinking.empty()) j["thinking"] = r.thinking;
  } else {
    j["message"] = {{"role", "assistant"}, {"content", r.content}};
    if (!r.thinking.empty()) j["message"]["thinking"] = r.thinking;
    if (!r.calls.empty()) j["message"]["tool_calls"] = tool_calls_json(r.calls);
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
    j[k] = final_line.value(k, int64_t{0});  // durations in ns pass 2^31 after 2.1 s
  }
  // heron's addition: how many of prompt_eval_count the prefix cache supplied.
  j["cached_tokens"] = final_line.value("cached_tokens", int64_t{0});
  // And how speculative decoding went, when it ran.
  if (final_line.contains("speculation")) j["speculation"] = final_line["speculation"];
}

std::string ndjson(const json& j) {
  return http::dump(j) + "\n";
}

// Load only (empty prompt or messages), or unload with keep_alive 0: Ollama answers
// with done_reason "load" / "unload".
void load_or_unload(httplib::Response& res, ServerContext& ctx, const OllamaRequest& r, Kind kind) {
  json j = body_for(kind, r.model.name, Reply{});
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

void respond(const httplib::Request& req, httplib::Response& res,
             std::shared_ptr<CompletionCall> call, const OllamaRequest& r, Kind kind,
             const std::optional<Reading>& reading) {
  const std::string model = r.model.name;
  if (!r.stream) {
    auto all = collect(*call, http::ClientWatch(req));
    if (all.client_gone) return;
    Reply reply{all.content};
    if (reading) {
      auto split = chat_output::split_output(reading->format, reading->tools, all.content);
      reply = {std::move(split.content), std::move(split.thinking), std::move(split.calls)};
    }
    json j = body_for(kind, model, reply);
    add_stats(j, all.final_line, *call);
    if (r.params.logprobs.enabled) j["logprobs"] = client_logprobs(all.logprobs);
    http::send_json(res, j);
    return;
  }
  std::shared_ptr<chat_output::OutputSplitter> splitter;
  if (reading)
    splitter = std::make_shared<chat_output::OutputSplitter>(reading->format, reading->tools);
  auto format = [call, model, kind, splitter](const json& line) {
    const bool done = line.value("done", false);
    const std::string text = line.value("content", "");
    std::string out;
    Reply piece{text};
    if (splitter) {
      auto events = splitter->feed(text);
      if (done) {  // what the end settles: held text, an unclosed call
        for (auto& e : splitter->finish()) events.push_back(std::move(e));
      }
      piece = reply_of(std::move(events));
    }
    const bool has_text = !piece.content.empty() || !piece.thinking.empty() || !piece.calls.empty();
    if (done && has_text && splitter) {  // the last text goes before the final object
      json j = body_for(kind, model, piece);
      j["done"] = false;
      out += ndjson(j);
      piece = Reply{};
    }
    if (!done && !has_text && !line.contains("logprobs") && splitter) return out;  // held back
    json j = body_for(kind, model, piece);
    if (line.contains("logprobs")) j["logprobs"] = client_logprobs(line["logprobs"]);
    if (done) {
      add_stats(j, line, *call);
    } else {
      j["done"] = false;
    }
    return out + ndjson(j);
  };
  auto format_error = [](int, const std::string& message) { return ndjson({{"error", message}}); };
  stream_completion(res, std::move(call), "application/x-ndjson", format, format_error);
}

// Ollama's "think": true/false -> enable_thinking; "high"/"medium"/"low" (gpt-oss) ->
// reasoning_effort with thinking on.
void add_think_keywords(const json& body, chat::ChatInput& input) {
  const json* think = http::field(body, "think");
  if (!think) return;
  if (think->is_boolean()) {
    input.extra["enable_thinking"] = think->get<bool>();
  } else if (think->is_string() && (*think == "high" || *think == "medium" || *think == "low")) {
    input.extra["enable_thinking"] = true;
    input.extra["reasoning_effort"] = think->get<std::string>();
  } else {
    throw http::bad_request("think must be true, false, \"high\", \"medium\" or \"low\"");
  }
}

void generate(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto prompt = http::get_string(body, "prompt", "prompt").value_or("");
  auto system = http::get_string(body, "system", "system");
  const bool raw = http::get_bool(body, "raw", "raw").value_or(false);
  auto r = parse_ollama_request(body, req.body, ctx);
  // A request's template replaces the model's, as a Modelfile TEMPLATE does: Jinja, like
  // every heron template (an Ollama Go template fails to parse: a 400 saying where).
  if (auto t = http::get_string(body, "template", "template"); t && !t->empty()) {
    r.model.chat_template = *t;
  }
  if (prompt.empty()) return load_or_unload(res, ctx, r, Kind::Generate);
  auto lease = ctx.pool.acquire(r.model, r.keep_alive);
  Prompt text{prompt, true};
  std::optional<Reading> reading;
  if (!raw) {
    chat::ChatInput input;
    if (system) input.messages.push_back({{"role", "system"}, {"content", *system}});
    input.messages.push_back({{"role", "user"}, {"content", prompt}});
    add_think_keywords(body, input);
    text = {render_prompt(lease->status(), r.model, input, "prompt"), false};
    reading = Reading{output_format(lease->status(), r.model, input, text.text), {}};
  }
  respond(req, res,
          std::make_shared<CompletionCall>(std::move(lease), text, r.params, t0, ctx.metrics), r,
          Kind::Generate, reading);
}

void chat_handler(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto input = parse_chat_input(req.body);
  add_think_keywords(body, input);
  auto r = parse_ollama_request(body, req.body, ctx);
  if (input.messages.empty()) return load_or_unload(res, ctx, r, Kind::Chat);
  auto lease = ctx.pool.acquire(r.model, r.keep_alive);
  Prompt text{render_prompt(lease->status(), r.model, input, "messages"), false};
  Reading reading{output_format(lease->status(), r.model, input, text.text),
                  chat_output::tool_names(input.tools)};
  respond(req, res,
          std::make_shared<CompletionCall>(std::move(lease), text, r.params, t0, ctx.metrics), r,
          Kind::Chat, reading);
}

}  // namespace

void install_ollama_routes(httplib::Server& server, ServerContext& ctx) {
  auto bind = [&ctx](void (*f)(const httplib::Request&, httplib::Response&, ServerContext&)) {
    return http::guarded(
        [&ctx, f](const httplib::Request& req, httplib::Response& res) { f(req, res, ctx); });
  };
  server.Post("/api/generate", bind(generate));
  server.Post("/api/chat", bind(chat_handler));
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
