#include "heron/runner/routes.h"

#include <httplib.h>

#include "heron/api/generation_params.h"
#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/responses.h"
#include "heron/runner/encoder_host.h"
#include "heron/runner/model_host.h"
#include "heron/runner/ndjson.h"
#include "heron/sample/sampler.h"

namespace heron::runner {

namespace {

using http::json;

// Prompt ids from "tokens" (checked against the vocabulary) or "prompt" text.
std::vector<int> prompt_ids(const json& body, const ModelHost& host) {
  if (const json* tokens = http::get_array(body, "tokens", "tokens")) {
    std::vector<int> ids;
    for (const auto& t : *tokens) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= host.vocab_size()) {
        throw http::bad_request("tokens must be integers in [0, " +
                                std::to_string(host.vocab_size()) + ")");
      }
      ids.push_back(t.get<int>());
    }
    return ids;
  }
  const auto text = http::get_string(body, "prompt", "prompt").value_or("");
  const bool add_special = http::get_bool(body, "add_special", "add_special").value_or(true);
  auto ids = host.tokenizer().encode(text, add_special, /*parse_special=*/true);
  return {ids.begin(), ids.end()};
}

std::shared_ptr<CompletionJob> make_job(const json& body, const ModelHost& host) {
  api::GenerationParams p;
  if (const json* o = http::get_object(body, "options", "options")) {
    api::read_ollama_options(*o, "options.", p);
  }
  try {
    sample::validate(p.sampling);
    sample::validate(p.logprobs);
  } catch (const Error& e) {
    throw http::bad_request(e.what());
  }
  auto job = std::make_shared<CompletionJob>();
  job->prompt = prompt_ids(body, host);
  const int context = host.context_length(p.num_ctx);
  const auto n = job->prompt.size();
  if (n == 0) throw http::bad_request("the prompt is empty");
  if (n >= static_cast<size_t>(context)) {
    throw http::bad_request("the prompt has " + std::to_string(n) +
                            " tokens, which does not fit the context length of " +
                            std::to_string(context) + " tokens");
  }
  job->options.max_tokens = p.num_predict < 0 ? -1 : p.num_predict;
  job->options.sampling = p.sampling;
  job->options.logprobs = p.logprobs;
  job->options.speculate = p.speculation;
  if (auto format = http::get_string(body, "format", "format"); format && !format->empty()) {
    try {
      job->options.grammar = host.output_grammars().matcher_for(*format);
    } catch (const Error& e) {
      throw http::bad_request(e.what());
    }
  }
  job->options.context_length = context;
  job->stop = p.stop;
  return job;
}

// Streams the job's events; a client that goes away cancels the job within one
// prefill chunk or decode step (the MLX thread polls `cancelled`).
void stream(httplib::Response& res, const std::shared_ptr<CompletionJob>& job) {
  res.set_chunked_content_provider(
      "application/x-ndjson",
      [job](size_t, httplib::DataSink& sink) {
        for (;;) {
          auto event = job->events.pop_for(std::chrono::milliseconds(50));
          if (!event) {
            if (!sink.is_writable()) {
              job->cancelled = true;
              return false;
            }
            continue;
          }
          const std::string line = http::dump(event_json(*event)) + "\n";
          if (!sink.write(line.data(), line.size())) {
            job->cancelled = true;
            return false;
          }
          if (event->kind != CompletionEvent::Kind::Piece) {
            sink.done();
            return true;
          }
        }
      },
      [job](bool success) {
        if (!success) job->cancelled = true;
      });
}

// The token check, /status and the tokenizer's endpoints, which every runner has.
template <class Host>
void install_common_routes(httplib::Server& server, Host& host, const std::string& token) {
  const std::string expected = "Bearer " + token;
  server.set_pre_routing_handler([expected](const httplib::Request& req, httplib::Response& res) {
    if (!http::equal_secret(req.get_header_value("Authorization"), expected)) {
      http::send_error(res, 401, "missing or wrong runner token");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.Get("/status", [&host](const httplib::Request&, httplib::Response& res) {
    http::send_json(res, host.status());
  });
  server.Post(
      "/tokenize", http::guarded([&host](const httplib::Request& req, httplib::Response& res) {
        auto body = http::parse_body(req.body);
        const auto text = http::get_string(body, "content", "content").value_or("");
        const bool add_special = http::get_bool(body, "add_special", "add_special").value_or(false);
        http::send_json(res, {{"tokens", host.tokenizer().encode(text, add_special, true)}});
      }));
  server.Post("/detokenize",
              http::guarded([&host](const httplib::Request& req, httplib::Response& res) {
                auto body = http::parse_body(req.body);
                std::vector<int32_t> ids;
                if (const json* tokens = http::get_array(body, "tokens", "tokens")) {
                  for (const auto& t : *tokens) {
                    if (!t.is_number_integer()) throw http::bad_request("tokens must be integers");
                    ids.push_back(t.get<int32_t>());
                  }
                }
                http::send_json(res, {{"content", host.tokenizer().decode(ids)}});
              }));
}

// /embed's inputs: each a text (tokenized with the model's special tokens) or token ids
// (checked against the vocabulary and taken as they are), fitted to the model's limit.
std::vector<std::vector<int32_t>> embed_inputs(const json& body, const EncoderHost& host) {
  const json* input = http::get_array(body, "input", "input");
  if (!input) throw http::bad_request("input is required");
  const bool truncate = http::get_bool(body, "truncate", "truncate").value_or(true);
  std::vector<std::vector<int32_t>> inputs;
  for (size_t i = 0; i < input->size(); ++i) {
    const json& item = (*input)[i];
    const std::string where = "input[" + std::to_string(i) + "]";
    std::vector<int32_t> ids;
    if (item.is_string()) {
      ids = host.tokenizer().encode(item.get<std::string>(), /*add_special=*/true,
                                    /*parse_special=*/false);
    } else if (item.is_array()) {
      for (const auto& t : item) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
            t.get<int64_t>() >= host.vocab_size()) {
          throw http::bad_request(where + ": tokens must be integers in [0, " +
                                  std::to_string(host.vocab_size()) + ")");
        }
        ids.push_back(t.get<int32_t>());
      }
      if (ids.empty()) throw http::bad_request(where + ": no tokens");
    } else {
      throw http::bad_request(where + ": expected a string or an array of token ids");
    }
    try {
      inputs.push_back(host.fit(std::move(ids), truncate));
    } catch (const Error& e) {
      throw http::bad_request(where + ": " + e.what());
    }
  }
  return inputs;
}

}  // namespace

void install_routes(httplib::Server& server, ModelHost& host, const std::string& token) {
  install_common_routes(server, host, token);
  server.Post("/completion",
              http::guarded([&host](const httplib::Request& req, httplib::Response& res) {
                auto job = make_job(http::parse_body(req.body), host);
                if (!host.submit(job)) {
                  res.set_header("Retry-After", "1");
                  throw http::HttpError(503, "the runner's request queue is full; retry later");
                }
                stream(res, job);
              }));
}

void install_encoder_routes(httplib::Server& server, EncoderHost& host, const std::string& token) {
  install_common_routes(server, host, token);
  server.Post("/embed", http::guarded([&host](const httplib::Request& req, httplib::Response& res) {
                const auto started = std::chrono::steady_clock::now();
                const auto inputs = embed_inputs(http::parse_body(req.body), host);
                auto vectors = host.embed(inputs);
                if (!vectors) {
                  res.set_header("Retry-After", "1");
                  throw http::HttpError(503, "the runner's request queue is full; retry later");
                }
                int64_t tokens = 0;
                for (const auto& in : inputs) tokens += static_cast<int64_t>(in.size());
                const auto took = std::chrono::steady_clock::now() - started;
                http::send_json(
                    res, {{"embeddings", *vectors},
                          {"prompt_eval_count", tokens},
                          {"prompt_eval_duration",
                           std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()}});
              }));
}

}  // namespace heron::runner
