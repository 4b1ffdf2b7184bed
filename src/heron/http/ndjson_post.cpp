#include "heron/http/ndjson_post.h"

#include "heron/http/json_fields.h"

namespace heron::http {

NdjsonReply post_ndjson(httplib::Client& client, const std::string& path,
                        const httplib::Headers& headers, const nlohmann::json& body,
                        const std::function<void(int)>& on_status,
                        const std::function<bool(const std::string&)>& on_line) {
  NdjsonReply reply;
  std::string pending;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.body = dump(body);
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    reply.status = res.status;
    on_status(res.status);
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (reply.status != 200) {
      reply.error_body.append(data, n);
      return true;
    }
    pending.append(data, n);
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (!line.empty() && !on_line(line)) return false;
    }
    return true;
  };
  const auto result = client.send(req);
  reply.error = result.error();
  reply.complete = static_cast<bool>(result);
  return reply;
}

}  // namespace heron::http
