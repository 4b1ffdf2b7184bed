#pragma once
// What every request to `heron serve` passes before a handler sees it: the Host check
// and Origin policy (origin_policy.h; 403 naming the header), CORS answers for allowed
// browser origins (preflight included), the body size limit (413), and every body read as
// JSON whatever its Content-Type says.
#include <cstddef>
#include <string>

#include "heron/http/origin_policy.h"
#include "heron/http/responses.h"

namespace httplib {
class Server;
}

namespace heron::http {

// Request bodies are JSON text: chat histories and prompts, never this large.
constexpr size_t kMaxBodyBytes = size_t{32} << 20;

struct GuardConfig {
  bool check_host = true;    // is_loopback_bind(listen address)
  std::string machine_name;  // gethostname(): also a valid Host
  OriginPolicy origins;
  // How a refusal is written for a request path (each API has its error shape); empty:
  // send_error's {"error": "..."}.
  std::function<ErrorWriter(const std::string& path)> errors_for;
};

// Installs the guard as the server's pre-routing handler and sets the body limit.
void install_request_guard(httplib::Server& server, GuardConfig config);

// The message for a rejected request's status when no handler wrote one.
std::string rejection_message(int status, const std::string& method, const std::string& path);

}  // namespace heron::http
