#pragma once
// POST /completion to a runner, read on a background thread so the caller can wait
// with a timeout (and watch its own client meanwhile) and can abort at any time:
// aborting closes the connection, which the runner takes as cancellation.
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "heron/core/channel.h"
#include "heron/server/runner_lines.h"

namespace httplib {
class Client;
}

namespace heron::server {

class RunnerStream {
 public:
  RunnerStream(int port, const std::string& token, const nlohmann::json& body);
  ~RunnerStream();
  RunnerStream(const RunnerStream&) = delete;
  RunnerStream& operator=(const RunnerStream&) = delete;

  // Waits for the runner's HTTP status. A non-200 answer is thrown as http::HttpError
  // with the runner's message; status 0 means the connection failed (see `why`).
  void wait_accepted();
  // The next line, or nullopt after `timeout`.
  std::optional<RunnerLine> next(std::chrono::milliseconds timeout);
  void abort();

 private:
  struct Accepted {
    int status;
    std::string message;
  };
  void run(nlohmann::json body);

  std::unique_ptr<httplib::Client> client_;
  std::string token_;
  std::promise<Accepted> accepted_;
  std::future<Accepted> accepted_future_;
  bool accepted_set_ = false;
  Channel<RunnerLine> lines_;
  std::thread thread_;
};

}  // namespace heron::server
