#pragma once
// POST a JSON body and read the answer as it arrives: the server reading a runner's
// /completion, the CLI reading the server's NDJSON streams. `LineSplitter` cuts the
// arriving bytes into lines.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace heron::http {

struct NdjsonReply {
  int status = 0;          // 0: no answer (see `error`)
  std::string error_body;  // the start of a non-200 answer (errors are short JSON objects)
  httplib::Error error = httplib::Error::Success;
  bool complete = false;  // the answer was read to its end
};

// `on_status` hears the status as soon as it arrives; `on_data` gets the bytes of a
// 200 answer in the pieces they arrive in and returns false to stop reading (closing
// the connection). Closing the client from another thread (Client::stop) also ends
// the call.
NdjsonReply post_ndjson(httplib::Client& client, const std::string& path,
                        const httplib::Headers& headers, const nlohmann::json& body,
                        const std::function<void(int)>& on_status,
                        const std::function<bool(std::string_view)>& on_data);

// Bytes in arbitrary pieces -> complete non-empty lines. A line longer than
// `max_line_bytes` sets `overflowed` and ends the splitting (holding an endless line
// would grow without bound).
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes) : max_(max_line_bytes) {}
  std::vector<std::string> feed(std::string_view data);
  bool overflowed() const { return overflowed_; }

 private:
  size_t max_;
  std::string pending_;
  bool overflowed_ = false;
};

}  // namespace heron::http
