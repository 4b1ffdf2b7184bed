#pragma once
// The CLI's side of heron's Ollama-compatible API: JSON requests, NDJSON streams, and
// errors that carry the server's own message.
#include <atomic>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/cli/host.h"
#include "heron/core/error.h"

namespace heron::cli {

// The server answered with an error; what() is its message.
class ServerError : public Error {
 public:
  ServerError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// Nothing answered at the address.
class ConnectionError : public Error {
 public:
  using Error::Error;
};

class ApiClient {
 public:
  explicit ApiClient(HostAddress address);

  const HostAddress& address() const { return address_; }
  // Whether a heron server answers `GET /` within `timeout_ms`.
  bool reachable(int timeout_ms = 1000) const;

  nlohmann::json get(const std::string& path) const;
  nlohmann::json post(const std::string& path, const nlohmann::json& body) const;
  nlohmann::json del(const std::string& path, const nlohmann::json& body) const;

  // POSTs `body` and hands each NDJSON line to `on_line` (on another thread). Returns
  // false when `cancel` turned true first: the connection is then closed, which stops
  // the work on the server. A final {"error": ...} line throws ServerError.
  bool stream(const std::string& path, const nlohmann::json& body,
              const std::function<void(const nlohmann::json&)>& on_line,
              const std::atomic<bool>& cancel) const;

 private:
  nlohmann::json send(const std::string& method, const std::string& path,
                      const nlohmann::json* body) const;

  HostAddress address_;
};

}  // namespace heron::cli
