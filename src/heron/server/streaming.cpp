#include "heron/server/streaming.h"

#include <httplib.h>

#include "heron/http/http_error.h"

namespace heron::server {

void stream_completion(httplib::Response& res, std::shared_ptr<CompletionCall> call,
                       const std::string& content_type, LineFormatter format,
                       ErrorFormatter format_error) {
  res.set_chunked_content_provider(
      content_type,
      [call, format = std::move(format), format_error = std::move(format_error)](
          size_t, httplib::DataSink& sink) {
        auto send = [&](const std::string& bytes) {
          return bytes.empty() || sink.write(bytes.data(), bytes.size());
        };
        for (;;) {
          std::optional<nlohmann::json> line;
          try {
            line = call->next(std::chrono::milliseconds(50));
          } catch (const http::HttpError& e) {
            send(format_error(e.status(), e.what()));
            sink.done();
            return true;
          }
          if (!line) {
            if (!sink.is_writable()) {
              call->abort();
              return false;
            }
            continue;
          }
          if (!send(format(*line))) {
            call->abort();
            return false;
          }
          if (line->value("done", false)) {
            sink.done();
            return true;
          }
        }
      },
      [call](bool success) {
        if (!success) call->abort();
      });
}

}  // namespace heron::server
