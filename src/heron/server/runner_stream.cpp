#include "heron/server/runner_stream.h"

#include <httplib.h>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

namespace {
constexpr size_t kMaxErrorBody = 1 << 20;
}  // namespace

RunnerStream::RunnerStream(int port, const std::string& token, const nlohmann::json& body)
    : client_(std::make_unique<httplib::Client>("127.0.0.1", port)),
      token_(token),
      accepted_future_(accepted_.get_future()) {
  // The runner says nothing while a request waits in its queue or prefills.
  client_->set_read_timeout(24 * 3600, 0);
  client_->set_connection_timeout(10, 0);
  thread_ = std::thread([this, body] { run(body); });
}

RunnerStream::~RunnerStream() {
  abort();
  thread_.join();
}

void RunnerStream::abort() {
  client_->stop();
}

void RunnerStream::run(nlohmann::json body) {
  int status = 0;
  std::string error_body;
  RunnerLineReader reader;
  auto accept = [&](int code, std::string message) {
    if (accepted_set_) return;
    accepted_set_ = true;
    accepted_.set_value({code, std::move(message)});
  };
  httplib::Request req;
  req.method = "POST";
  req.path = "/completion";
  req.headers = {{"Authorization", "Bearer " + token_}};
  req.body = http::dump(body);
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    if (status == 200) accept(200, "");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (status != 200) {
      error_body.append(data, n);
      return error_body.size() <= kMaxErrorBody;  // an error is a short JSON object
    }
    for (auto& line : reader.feed({data, n})) lines_.push(std::move(line));
    return true;
  };
  auto result = client_->send(req);
  if (status != 200) {
    std::string message = httplib::to_string(result.error());
    try {
      message = nlohmann::json::parse(error_body).at("error").get<std::string>();
    } catch (const std::exception&) {
    }
    accept(status, message);
  } else if (!reader.final_seen()) {
    lines_.push({{},
                 true,
                 "the connection closed mid-stream (" + httplib::to_string(result.error()) + ")"});
  }
  lines_.close();
}

void RunnerStream::wait_accepted() {
  auto a = accepted_future_.get();
  if (a.status == 200) return;
  if (a.status == 0) throw http::HttpError(502, a.message);
  throw http::HttpError(a.status, a.message);
}

std::optional<RunnerLine> RunnerStream::next(std::chrono::milliseconds timeout) {
  return lines_.pop_for(timeout);
}

}  // namespace heron::server
