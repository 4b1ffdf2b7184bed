#pragma once
// Defences against DNS rebinding and cross-site requests from browsers, as Ollama has
// them (server/routes.go allowedHostsMiddleware, envconfig AllowedOrigins):
// - Host: when the server listens on a loopback address, a request must name this
//   machine (localhost, *.localhost, a loopback or unspecified IP literal, the host
//   name). A page on evil.example that re-resolves its name to 127.0.0.1 still sends
//   "Host: evil.example", and is refused. Bound to another address, clients reach the
//   server under names we cannot know, so Host is not checked.
// - Origin: a request without one (curl, SDKs) passes; a browser's must match an
//   allowed pattern: http(s)://localhost, 127.0.0.1, 0.0.0.0 on any port; app://,
//   file://, tauri://, vscode-webview:// anything; plus HERON_ORIGINS (comma-separated,
//   `*` matches any run of characters).
#include <string>
#include <string_view>
#include <vector>

namespace heron::http {

// Case-insensitive glob where `*` matches any (possibly empty) run of characters.
bool wildcard_match(std::string_view pattern, std::string_view text);

// Whether `bind_host` (as given to listen) is a loopback address, so Host is checked.
bool is_loopback_bind(std::string_view bind_host);

// Whether a Host header ("name", "name:port", "[v6]:port") names this machine.
bool host_allowed(std::string_view host_header, std::string_view machine_name);

class OriginPolicy {
 public:
  // The defaults plus `extra_origins` (HERON_ORIGINS: comma-separated, spaces and
  // quotes around entries trimmed). patterns() lists the glob patterns (the app
  // schemes and the extras); local web origins are matched exactly, port digits only.
  explicit OriginPolicy(std::string_view extra_origins = {});
  bool allowed(std::string_view origin) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  std::vector<std::string> patterns_;
};

}  // namespace heron::http
