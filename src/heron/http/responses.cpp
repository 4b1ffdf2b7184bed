#include "heron/http/responses.h"

#include <httplib.h>

#include "heron/http/http_error.h"
#include "heron/http/json_fields.h"

namespace heron::http {

void send_json(httplib::Response& res, const nlohmann::json& body, int status) {
  res.status = status;
  res.set_content(dump(body), "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

Handler guarded(Handler handler, ErrorWriter write_error) {
  return [handler = std::move(handler), write_error = std::move(write_error)](
             const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const HttpError& e) {
      // A full queue (here or in a runner) tells the client when to come back.
      if (e.status() == 503 && !res.has_header("Retry-After")) res.set_header("Retry-After", "1");
      write_error(res, e.status(), e.what());
    } catch (const Error& e) {
      write_error(res, 400, e.what());
    } catch (const std::exception& e) {
      write_error(res, 500, std::string("internal error: ") + e.what());
    }
  };
}

bool equal_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  }
  return diff == 0 && !b.empty();
}

}  // namespace heron::http
