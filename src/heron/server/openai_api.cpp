#include "heron/server/openai_api.h"

#include <httplib.h>

#include <random>
#include <utility>

#include "heron/chat_output/output_splitter.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/server/chat_input.h"
#include "heron/server/completion_call.h"
#include "heron/server/logprob_format.h"
#include "heron/server/openai_request.h"
#include "heron/server/prompt.h"
#include "heron/server/streaming.h"
#include "heron/server/time_format.h"

namespace heron::server {

namespace {

using json = nlohmann::json;

const char* error_type(int status) {
  switch (status) {
    case 400:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 503:
      return "overloaded_error";
    default:
      return "server_error";
  }
}

json error_json(int status, const std::string& message) {
  return {{"error",
           {{"message", message},
            {"type", error_type(status)},
            {"param", nullptr},
            {"code", nullptr}}}};
}

// What OpenAI answers for a model it does not have.
json model_not_found_json(const std::string& message) {
  auto j = error_json(404, message);
  j["error"]["type"] = "invalid_request_error";
  j["error"]["code"] = "model_not_found";
  return j;
}

std::string sse(const json& j) {
  return "data: " + http::dump(j) + "\n\n";
}

std::string new_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id.push_back(alphabet[rng() % 36]);
  return id;
}

std::string finish_reason(const json& final_line, bool called = false) {
  if (called) return "tool_calls";
  const auto r = final_line.value("done_reason", "stop");
  return r == "length" ? "length" : "stop";
}

// How a chat answer is read back: the template's output syntax and the request's tools.
struct Reading {
  chat_output::OutputFormat format;
  chat_output::ToolNames tools;
};

// OpenAI's function call: arguments as a JSON string, in the model's key order.
json tool_call_json(const chat_output::ToolCall& call, const std::string& id) {
  return {{"id", id},
          {"type", "function"},
          {"function", {{"name", call.name}, {"arguments", call.arguments_json()}}}};
}

json usage(const json& final_line) {
  const int prompt = final_line.value("prompt_eval_count", 0);
  const int completion = final_line.value("eval_count", 0);
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion},
          {"prompt_tokens_details", {{"cached_tokens", final_line.value("cached_tokens", 0)}}}};
}

// Legacy /v1/completions logprobs: parallel arrays.
json legacy_logprobs(const json& runner_entries, size_t text_offset) {
  json out = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const auto& e : runner_entries) {
    const auto token = e.value("token", "");
    out["tokens"].push_back(token);
    out["token_logprobs"].push_back(e.value("logprob", 0.0));
    json top = json::object();
    for (const auto& alt : e.value("top_logprobs", json::array())) {
      top[alt.value("token", "")] = alt.value("logprob", 0.0);
    }
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(text_offset);
    text_offset += token.size();
  }
  return out;
}

struct Shape {
  bool chat;
  std::string id = "";
  int64_t created = 0;
  std::string model = "";
  json head() const {
    return {{"id", id},
            {"object", chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created},
            {"model", model},
            {"system_fingerprint", "heron"}};
  }
};

// `reading` applies to chat answers; legacy completions pass their text as it is.
void respond(const httplib::Request& req, httplib::Response& res,
             std::shared_ptr<CompletionCall> call, const OpenAIRequest& r, bool chat,
             const Reading& reading = {}) {
  Shape shape{chat, new_id(chat ? "chatcmpl-" : "cmpl-"), unix_seconds_now(), r.model.name};
  const bool logprobs = r.params.logprobs.enabled;
  if (!r.stream) {
    auto all = collect(*call, http::ClientWatch(req));
    if (all.client_gone) return;
    json j = shape.head();
    auto split = chat_output::split_output(reading.format, reading.tools, all.content);
    json choice = {{"index", 0},
                   {"finish_reason", finish_reason(all.final_line, !split.calls.empty())}};
    if (chat) {
      j["object"] = "chat.completion";
      json message = {{"role", "assistant"}, {"content", split.content}};
      if (split.content.empty() && !split.calls.empty()) message["content"] = nullptr;
      if (!split.thinking.empty()) message["reasoning_content"] = split.thinking;
      if (!split.calls.empty()) {
        message["tool_calls"] = json::array();
        for (const auto& c : split.calls) {
          message["tool_calls"].push_back(tool_call_json(c, new_id("call_")));
        }
      }
      choice["message"] = std::move(message);
      choice["logprobs"] =
          logprobs ? json{{"content", client_logprobs(all.logprobs)}} : json(nullptr);
    } else {
      choice["text"] = all.content;
      choice["logprobs"] = logprobs ? legacy_logprobs(all.logprobs, 0) : json(nullptr);
    }
    j["choices"] = json::array({choice});
    j["usage"] = usage(all.final_line);
    http::send_json(res, j);
    return;
  }
  auto first = std::make_shared<bool>(true);
  auto offset = std::make_shared<size_t>(0);
  auto splitter = std::make_shared<chat_output::OutputSplitter>(reading.format, reading.tools);
  auto calls = std::make_shared<int>(0);  // tool calls streamed so far: the next one's index
  const bool include_usage = r.include_usage;
  auto format = [shape, first, offset, logprobs, include_usage, splitter, calls](const json& line) {
    const bool done = line.value("done", false);
    const std::string text = line.value("content", "");
    std::string out;
    auto chunk = [&](json choice) {
      json j = shape.head();
      choice["index"] = 0;
      j["choices"] = json::array({std::move(choice)});
      out += sse(j);
    };
    // The line's logprobs ride on its first chunk.
    bool logprobs_sent = !line.contains("logprobs");
    auto delta_chunk = [&](json delta) {
      json choice = {{"finish_reason", nullptr}, {"logprobs", nullptr}};
      if (*first) delta["role"] = "assistant";
      *first = false;
      choice["delta"] = std::move(delta);
      if (!logprobs_sent && logprobs) {
        choice["logprobs"] = json{{"content", client_logprobs(line["logprobs"])}};
      }
      logprobs_sent = true;
      chunk(std::move(choice));
    };
    if (shape.chat) {
      auto events = splitter->feed(text);
      if (done) {
        for (auto& e : splitter->finish()) events.push_back(std::move(e));
      }
      for (auto& e : events) {
        using Kind = chat_output::OutputEvent::Kind;
        if (e.kind == Kind::Content) {
          delta_chunk({{"content", e.text}});
        } else if (e.kind == Kind::Thinking) {
          delta_chunk({{"reasoning_content", e.text}});
        } else {
          // As the openai client assembles calls: id, type and name first, then the
          // arguments string (which may come in any number of pieces).
          const int index = (*calls)++;
          json head = tool_call_json(e.call, new_id("call_"));
          head["index"] = index;
          head["function"]["arguments"] = "";
          delta_chunk({{"tool_calls", json::array({head})}});
          json args = {{"index", index}, {"function", {{"arguments", e.call.arguments_json()}}}};
          delta_chunk({{"tool_calls", json::array({args})}});
        }
      }
      if (!logprobs_sent || *first) delta_chunk({{"content", ""}});
    } else if (!text.empty() || line.contains("logprobs")) {
      json choice = {{"finish_reason", nullptr}, {"logprobs", nullptr}, {"text", text}};
      if (logprobs && line.contains("logprobs")) {
        choice["logprobs"] = legacy_logprobs(line["logprobs"], *offset);
      }
      *offset += text.size();
      chunk(std::move(choice));
    }
    if (done) {
      json choice = {{"finish_reason", finish_reason(line, *calls > 0)}, {"logprobs", nullptr}};
      if (shape.chat) {
        choice["delta"] = json::object();
      } else {
        choice["text"] = "";
      }
      chunk(std::move(choice));
      if (include_usage) {
        json j = shape.head();
        j["choices"] = json::array();
        j["usage"] = usage(line);
        out += sse(j);
      }
      out += "data: [DONE]\n\n";
    }
    return out;
  };
  auto format_error = [](int status, const std::string& message) {
    return sse(error_json(status, message)) + "data: [DONE]\n\n";
  };
  stream_completion(res, std::move(call), "text/event-stream", format, format_error);
}

// Template keywords: vLLM's chat_template_kwargs, and reasoning_effort (gpt-oss).
void add_template_keywords(const std::string& raw_body, const json& body, chat::ChatInput& input) {
  if (http::get_object(body, "chat_template_kwargs", "chat_template_kwargs")) {
    // Read again in the client's key order: values may reach the template's tojson.
    const auto ordered = nlohmann::ordered_json::parse(raw_body);
    for (const auto& [key, value] : ordered["chat_template_kwargs"].items()) {
      input.extra[key] = value;
    }
  }
  if (auto effort = http::get_string(body, "reasoning_effort", "reasoning_effort")) {
    input.extra["reasoning_effort"] = *effort;
  }
}

void chat_completions(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto input = parse_chat_input(req.body);
  if (input.messages.empty()) throw http::bad_request("messages must be a non-empty array");
  add_template_keywords(req.body, body, input);
  auto r = parse_openai_request(body, req.body, ctx, /*legacy=*/false);
  auto lease = ctx.pool.acquire(r.model, ctx.default_keep_alive);
  Prompt prompt{render_prompt(lease->status(), r.model, input, "messages"), false};
  Reading reading{output_format(lease->status(), r.model, input, prompt.text),
                  chat_output::tool_names(input.tools)};
  respond(req, res,
          std::make_shared<CompletionCall>(std::move(lease), prompt, r.params, t0, ctx.metrics), r,
          true, reading);
}

void completions(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  const auto t0 = Clock::now();
  auto body = http::parse_body(req.body);
  auto prompts = http::get_strings(body, "prompt", "prompt");
  if (!prompts || prompts->size() != 1) {
    throw http::bad_request("prompt must be a string (or an array of exactly one string)");
  }
  auto r = parse_openai_request(body, req.body, ctx, /*legacy=*/true);
  auto lease = ctx.pool.acquire(r.model, ctx.default_keep_alive);
  respond(req, res,
          std::make_shared<CompletionCall>(std::move(lease), Prompt{prompts->front(), true},
                                           r.params, t0, ctx.metrics),
          r, false);
}

json model_json(const ResolvedModel& m) {
  return {
      {"id", m.name}, {"object", "model"}, {"created", unix_seconds_now()}, {"owned_by", "heron"}};
}

}  // namespace

bool is_openai_path(const std::string& path) {
  return path.starts_with("/v1/");
}

void send_openai_error(httplib::Response& res, int status, const std::string& message) {
  http::send_json(res, error_json(status, message), status);
}

void install_openai_routes(httplib::Server& server, ServerContext& ctx) {
  auto bind = [&ctx](void (*f)(const httplib::Request&, httplib::Response&, ServerContext&)) {
    return http::guarded(
        [&ctx, f](const httplib::Request& req, httplib::Response& res) {
          try {
            f(req, res, ctx);
          } catch (const http::ModelNotFound& e) {
            http::send_json(res, model_not_found_json(e.what()), e.status());
          }
        },
        send_openai_error);
  };
  server.Post("/v1/chat/completions", bind(chat_completions));
  server.Post("/v1/completions", bind(completions));
  server.Get("/v1/models",
             bind([](const httplib::Request&, httplib::Response& res, ServerContext& c) {
               auto data = json::array();
               for (const auto& m : c.resolver.list()) data.push_back(model_json(m));
               http::send_json(res, {{"object", "list"}, {"data", data}});
             }));
  server.Get(R"(/v1/models/(.+))",
             bind([](const httplib::Request& req, httplib::Response& res, ServerContext& c) {
               http::send_json(res, model_json(c.resolver.resolve(req.matches[1].str())));
             }));
}

}  // namespace heron::server
