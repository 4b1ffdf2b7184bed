#include "heron/server/completion_call.h"

#include "heron/http/http_error.h"
#include "heron/server/capabilities.h"
#include "heron/server/server_metrics.h"

namespace heron::server {

CompletionCall::CompletionCall(std::unique_ptr<Lease> lease, const Prompt& prompt,
                               const api::GenerationParams& params, Clock::time_point started,
                               ServerMetrics* metrics)
    : lease_(std::move(lease)),
      model_(lease_->model()),
      load_seconds_(lease_->load_seconds()),
      started_(started),
      metrics_(metrics) {
  require_completion(lease_->status(), model_.name);
  nlohmann::json body = {{"prompt", prompt.text},
                         {"add_special", prompt.add_special},
                         {"options", api::to_ollama_options(params)}};
  if (!params.format.empty()) body["format"] = params.format;
  auto& process = lease_->process();
  stream_ = std::make_unique<RunnerStream>(process.port(), process.token(), body);
  try {
    stream_->wait_accepted();
  } catch (const http::HttpError& e) {
    if (e.status() == 502) runner_lost(e.what());
    throw;
  }
}

void CompletionCall::runner_lost(const std::string& why) {
  auto& process = lease_->process();
  for (int i = 0; i < 20 && process.alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a kill takes a moment to land
  }
  if (!process.alive()) {
    throw http::HttpError(500, "the model runner for '" + model_.name + "' stopped unexpectedly (" +
                                   process.exit_description() +
                                   "); the next request starts a new one");
  }
  throw http::HttpError(
      502, "lost the connection to the model runner for '" + model_.name + "': " + why);
}

std::optional<nlohmann::json> CompletionCall::next(std::chrono::milliseconds timeout) {
  auto line = stream_->next(timeout);
  if (!line) return std::nullopt;
  if (line->broken) runner_lost(line->why);
  if (const auto it = line->value.find("error"); it != line->value.end()) {
    const auto& e = *it;
    if (e.is_object()) {
      throw http::HttpError(e.value("status", 500),
                            e.value("message", std::string("runner error")));
    }
    throw http::HttpError(500, e.is_string() ? e.get<std::string>() : e.dump());
  }
  record(line->value);
  return std::move(line->value);
}

void CompletionCall::record(const nlohmann::json& line) {
  if (!metrics_) return;
  const bool done = line.value("done", false);
  // The runner sends no empty pieces, so the first line is the first text (or the end).
  if (!first_seen_) {
    first_seen_ = true;
    metrics_->first_token(model_.name,
                          std::chrono::duration<double>(Clock::now() - started_).count());
  }
  if (done) metrics_->completed(model_.name, line);
}

Collected collect(CompletionCall& call, const http::ClientWatch& client) {
  constexpr auto kCheckEvery = std::chrono::milliseconds(50);
  Collected out;
  auto next_check = Clock::now() + kCheckEvery;
  for (;;) {
    auto line = call.next(kCheckEvery);
    // Lines can arrive faster than the check interval, so the client is checked by the
    // clock, not only when the runner is quiet.
    if (Clock::now() >= next_check) {
      next_check = Clock::now() + kCheckEvery;
      if (client.gone()) {
        call.abort();  // closing the runner connection cancels the work there
        out.client_gone = true;
        return out;
      }
    }
    if (!line) continue;
    out.content += line->value("content", "");
    if (line->contains("logprobs")) {
      for (auto& lp : (*line)["logprobs"]) out.logprobs.push_back(std::move(lp));
    }
    if (line->value("done", false)) {
      out.final_line = std::move(*line);
      return out;
    }
  }
}

}  // namespace heron::server
