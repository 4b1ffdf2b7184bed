#include "heron/server/runner_call.h"

#include <httplib.h>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::server {

nlohmann::json call_runner(Lease& lease, const std::string& path, const nlohmann::json& body) {
  auto& process = lease.process();
  httplib::Client client("127.0.0.1", process.port());
  client.set_read_timeout(24 * 3600, 0);  // a request may wait in the runner's queue
  client.set_connection_timeout(10, 0);
  const auto reply = client.Post(path, {{"Authorization", "Bearer " + process.token()}},
                                 http::dump(body), "application/json");
  if (!reply) {
    const std::string why = process.alive()
                                ? "lost the connection (" + httplib::to_string(reply.error()) + ")"
                                : "stopped unexpectedly (" + process.exit_description() + ")";
    throw http::HttpError(500, "the model runner for '" + lease.model().name + "' " + why +
                                   "; the next request starts a new one");
  }
  nlohmann::json answer = nlohmann::json::parse(reply->body, nullptr, false);
  if (reply->status != 200) {
    std::string message = "the model runner answered " + std::to_string(reply->status);
    if (answer.is_object() && answer.contains("error") && answer["error"].is_string()) {
      message = answer["error"].get<std::string>();
    }
    throw http::HttpError(reply->status, message);
  }
  if (answer.is_discarded()) throw http::HttpError(502, "the model runner's answer is not JSON");
  return answer;
}

}  // namespace heron::server
