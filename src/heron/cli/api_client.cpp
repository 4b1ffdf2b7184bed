#include "heron/cli/api_client.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "heron/http/json_fields.h"
#include "heron/http/ndjson_post.h"

namespace heron::cli {

namespace {

using json = nlohmann::json;

std::unique_ptr<httplib::Client> make_client(const HostAddress& a) {
  auto c = std::make_unique<httplib::Client>(a.host, a.port);
  c->set_connection_timeout(5, 0);
  // Loading a model or a long prefill says nothing for a while.
  c->set_read_timeout(24 * 3600, 0);
  return c;
}

// The server's {"error": "..."} message, else the body itself.
std::string error_message(int status, const std::string& body) {
  try {
    const json j = json::parse(body);
    if (j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  } catch (const std::exception&) {
  }
  return body.empty() ? "HTTP " + std::to_string(status) : body;
}

ConnectionError no_connection(const HostAddress& a, httplib::Error e) {
  const std::string why =
      e == httplib::Error::Connection ? "nothing answers there" : httplib::to_string(e);
  return ConnectionError("could not connect to heron at " + a.url() + ": " + why +
                         " (is `heron serve` running? $HERON_HOST sets the address)");
}

json parse_reply(const std::string& body) {
  if (body.empty()) return json::object();
  try {
    return json::parse(body);
  } catch (const std::exception&) {
    throw Error("the server sent a reply that is not JSON: " + body.substr(0, 200));
  }
}

}  // namespace

ApiClient::ApiClient(HostAddress address) : address_(std::move(address)) {}

bool ApiClient::reachable(int timeout_ms) const {
  httplib::Client c(address_.host, address_.port);
  c.set_connection_timeout(std::chrono::milliseconds(timeout_ms));
  c.set_read_timeout(std::chrono::milliseconds(timeout_ms));
  auto res = c.Get("/");
  return res && res->status == 200;
}

json ApiClient::send(const std::string& method, const std::string& path, const json* body) const {
  auto client = make_client(address_);
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (body) {
    req.body = http::dump(*body);
    req.set_header("Content-Type", "application/json");
  }
  auto res = client->send(req);
  if (!res) throw no_connection(address_, res.error());
  if (res->status != 200) throw ServerError(res->status, error_message(res->status, res->body));
  return parse_reply(res->body);
}

json ApiClient::get(const std::string& path) const {
  return send("GET", path, nullptr);
}

json ApiClient::post(const std::string& path, const json& body) const {
  return send("POST", path, &body);
}

json ApiClient::del(const std::string& path, const json& body) const {
  return send("DELETE", path, &body);
}

bool ApiClient::stream(const std::string& path, const json& body,
                       const std::function<void(const json&)>& on_line,
                       const std::atomic<bool>& cancel) const {
  auto client = make_client(address_);
  std::exception_ptr failure;
  http::LineSplitter lines(size_t{64} << 20);  // far beyond any answer line
  auto read = [&](std::string_view data) {
    try {
      for (const auto& line : lines.feed(data)) {
        const json j = parse_reply(line);
        if (j.contains("error")) throw ServerError(500, error_message(500, line));
        on_line(j);
      }
      if (lines.overflowed()) throw Error("the server sent an over-long line");
      return true;
    } catch (...) {
      failure = std::current_exception();
      return false;
    }
  };

  // The request runs on its own thread so that a cancel can close the connection even
  // while the server is silent (loading, prefill).
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  http::NdjsonReply reply;
  std::thread worker([&] {
    auto r = http::post_ndjson(
        *client, path, {}, body, [](int) {}, read);
    std::lock_guard lock(mu);
    reply = std::move(r);
    finished = true;
    cv.notify_all();
  });
  bool cancelled = false;
  {
    std::unique_lock lock(mu);
    while (!finished) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      if (!finished && !cancelled && cancel.load()) {
        cancelled = true;
        client->stop();
      }
    }
  }
  worker.join();
  if (cancelled) return false;
  if (failure) std::rethrow_exception(failure);
  if (reply.status == 0) throw no_connection(address_, reply.error);
  if (reply.status != 200)
    throw ServerError(reply.status, error_message(reply.status, reply.error_body));
  if (!reply.complete) {
    throw Error("the connection to " + address_.url() + " closed mid-answer (" +
                httplib::to_string(reply.error) + ")");
  }
  return true;
}

}  // namespace heron::cli
