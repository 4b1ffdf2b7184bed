#include "heron/server/runner_stream.h"

#include <httplib.h>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"
#include "heron/http/ndjson_post.h"

namespace heron::server {

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
  RunnerLineReader reader;
  auto accept = [&](int code, std::string message) {
    if (accepted_set_) return;
    accepted_set_ = true;
    accepted_.set_value({code, std::move(message)});
  };
  const auto reply = http::post_ndjson(
      *client_, "/completion", {{"Authorization", "Bearer " + token_}}, body,
      [&](int status) {
        if (status == 200) accept(200, "");
      },
      [&](std::string_view data) {
        for (auto& line : reader.feed(data)) lines_.push(std::move(line));
        return true;
      });
  if (reply.status != 200) {
    std::string message = httplib::to_string(reply.error);
    try {
      message = nlohmann::json::parse(reply.error_body).at("error").get<std::string>();
    } catch (const std::exception&) {
    }
    accept(reply.status, message);
  } else if (!reader.final_seen()) {
    lines_.push(
        {{}, true, "the connection closed mid-stream (" + httplib::to_string(reply.error) + ")"});
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
