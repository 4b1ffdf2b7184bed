#pragma once
// POST a JSON body and read the answer as NDJSON, one line at a time, as it arrives:
// the server reading a runner's /completion, the CLI reading the server's streams.
#include <functional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace heron::http {

struct NdjsonReply {
  int status = 0;          // 0: no answer (see `error`)
  std::string error_body;  // the body of a non-200 answer
  httplib::Error error = httplib::Error::Success;
  bool complete = false;  // the answer was read to its end
};

// `on_status` hears the status as soon as it arrives; `on_line` gets each non-empty
// line of a 200 answer and returns false to stop reading (closing the connection).
// Closing the client from another thread (Client::stop) also ends the call.
NdjsonReply post_ndjson(httplib::Client& client, const std::string& path,
                        const httplib::Headers& headers, const nlohmann::json& body,
                        const std::function<void(int)>& on_status,
                        const std::function<bool(const std::string&)>& on_line);

}  // namespace heron::http
