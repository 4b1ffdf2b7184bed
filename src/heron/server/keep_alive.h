#pragma once
// Ollama's keep_alive: a number of seconds or a Go duration string ("5m", "1h30m",
// "300ms"); 0 unloads at once, a negative value keeps the model loaded forever.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

namespace heron::server {

struct KeepAlive {
  bool forever = false;
  std::chrono::milliseconds duration{std::chrono::minutes(5)};
};

// `name` is the field or variable named in errors (a 400 for a request field).
KeepAlive parse_keep_alive(const nlohmann::json& value, const std::string& name);
KeepAlive parse_keep_alive(const std::string& text, const std::string& name);
// $HERON_KEEP_ALIVE, else 5 minutes.
KeepAlive default_keep_alive();

}  // namespace heron::server
