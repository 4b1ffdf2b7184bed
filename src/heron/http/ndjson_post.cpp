#include "heron/http/ndjson_post.h"

#include <utility>

#include "heron/http/json_fields.h"

namespace heron::http {

namespace {

constexpr size_t kMaxErrorBody = size_t{1} << 20;

}  // namespace

NdjsonReply post_ndjson(httplib::Client& client, const std::string& path,
                        const httplib::Headers& headers, const nlohmann::json& body,
                        const std::function<void(int)>& on_status,
                        const std::function<bool(std::string_view)>& on_data) {
  NdjsonReply reply;
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
    if (reply.status == 200) return on_data({data, n});
    reply.error_body.append(data, n);
    return reply.error_body.size() <= kMaxErrorBody;
  };
  const auto result = client.send(req);
  reply.error = result.error();
  reply.complete = static_cast<bool>(result);
  return reply;
}

std::vector<std::string> LineSplitter::feed(std::string_view data) {
  std::vector<std::string> lines;
  while (!overflowed_ && !data.empty()) {
    const size_t nl = data.find('\n');
    const bool complete = nl != std::string_view::npos;
    pending_.append(data.substr(0, complete ? nl : data.size()));
    data.remove_prefix(complete ? nl + 1 : data.size());
    if (pending_.size() > max_) {
      overflowed_ = true;
      pending_.clear();
      break;
    }
    if (!complete) break;
    std::string line = std::exchange(pending_, {});
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace heron::http
