#pragma once
// Streams a completion to an HTTP client. `format` turns each runner line into the
// bytes to send (NDJSON or SSE); `format_error` renders an error that happens after
// the status was sent. A client that goes away aborts the runner request, which the
// runner takes as cancellation.
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/server/completion_call.h"

namespace httplib {
struct Response;
}

namespace heron::server {

using LineFormatter = std::function<std::string(const nlohmann::json& line)>;
using ErrorFormatter = std::function<std::string(int status, const std::string& message)>;

void stream_completion(httplib::Response& res, std::shared_ptr<CompletionCall> call,
                       const std::string& content_type, LineFormatter format,
                       ErrorFormatter format_error);

}  // namespace heron::server
