#pragma once
// One completion on a leased runner, as the API handlers use it: start it (errors
// before streaming are HttpErrors with the runner's status), read its lines, and turn
// a runner that died mid-request into a clear error.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/api/generation_params.h"
#include "heron/http/client_watch.h"
#include "heron/server/runner_pool.h"
#include "heron/server/runner_stream.h"

namespace heron::server {

// A prompt for the runner. A chat template writes its own special tokens, so rendered
// prompts are tokenized without the tokenizer's BOS/EOS (as transformers'
// apply_chat_template does); raw prompts get them.
struct Prompt {
  std::string text;
  bool add_special;
};

class ServerMetrics;

class CompletionCall {
 public:
  // `metrics` (may be null) records the first text's time and the final line's counts.
  CompletionCall(std::unique_ptr<Lease> lease, const Prompt& prompt,
                 const api::GenerationParams& params, Clock::time_point started,
                 ServerMetrics* metrics);
  // The next runner line (a piece, or the final line with "done"); nullopt after
  // `timeout`. Throws http::HttpError for an error line or a runner that went away.
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout);
  void abort() { stream_->abort(); }
  const ResolvedModel& model() const { return model_; }
  double load_seconds() const { return load_seconds_; }
  Clock::time_point started() const { return started_; }

 private:
  [[noreturn]] void runner_lost(const std::string& why);
  void record(const nlohmann::json& line);

  std::unique_ptr<Lease> lease_;  // declared first: outlives the stream
  ResolvedModel model_;
  double load_seconds_;
  Clock::time_point started_;
  ServerMetrics* metrics_;
  bool first_seen_ = false;
  std::unique_ptr<RunnerStream> stream_;
};

// The whole completion, for stream=false.
struct Collected {
  bool client_gone = false;  // the client left first: the work was cancelled, send nothing
  std::string content;
  nlohmann::json logprobs = nlohmann::json::array();
  nlohmann::json final_line;
};
Collected collect(CompletionCall& call, const http::ClientWatch& client);

}  // namespace heron::server
