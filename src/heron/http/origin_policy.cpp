#include "heron/http/origin_policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace heron::http {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

// "name", "name:port", "[v6]", "[v6]:port" -> name (v6 without brackets). A bare v6
// literal with colons and no brackets is returned whole.
std::string_view host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? std::string_view{} : host.substr(1, close - 1);
  }
  const auto colon = host.find(':');
  if (colon != std::string_view::npos && host.find(':', colon + 1) == std::string_view::npos) {
    return host.substr(0, colon);
  }
  return host;
}

// Loopback (127.0.0.0/8, ::1) or unspecified (0.0.0.0, ::) IP literal.
bool local_ip_literal(std::string_view name, bool allow_unspecified) {
  const std::string s(name);
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    const uint32_t a = ntohl(v4.s_addr);
    return (a >> 24) == 127 || (allow_unspecified && a == 0);
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    static const in6_addr any = IN6ADDR_ANY_INIT;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (allow_unspecified && std::memcmp(&v6, &any, 16) == 0);
  }
  return false;
}

std::string trim(std::string_view s) {
  const auto junk = [](char c) { return c == ' ' || c == '\t' || c == '"' || c == '\''; };
  while (!s.empty() && junk(s.front())) s.remove_prefix(1);
  while (!s.empty() && junk(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// http(s)://localhost, 127.0.0.1 or 0.0.0.0 with an optional numeric port. Matched
// exactly rather than as "http://localhost:*", which would let "http://localhost:1.evil"
// through.
bool local_web_origin(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.size() <= scheme.size() || !iequals(origin.substr(0, scheme.size()), scheme)) {
      continue;
    }
    auto rest = origin.substr(scheme.size());
    for (std::string_view host : {"localhost", "127.0.0.1", "0.0.0.0"}) {
      if (rest.size() < host.size() || !iequals(rest.substr(0, host.size()), host)) continue;
      auto port = rest.substr(host.size());
      if (port.empty()) return true;
      if (port.size() < 2 || port.size() > 6 || port[0] != ':') continue;
      port.remove_prefix(1);
      if (std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy glob with backtracking to the last star: linear in practice, never recursive.
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && lower(pattern[p]) == lower(text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool is_loopback_bind(std::string_view bind_host) {
  const auto name = host_name(bind_host);
  return iequals(name, "localhost") || local_ip_literal(name, /*allow_unspecified=*/false);
}

bool host_allowed(std::string_view host_header, std::string_view machine_name) {
  const auto name = host_name(host_header);
  if (host_header.empty()) return true;  // HTTP/1.0 without Host: not a browser
  if (name.empty()) return false;
  return iequals(name, "localhost") || ends_with_ci(name, ".localhost") ||
         local_ip_literal(name, /*allow_unspecified=*/true) ||
         (!machine_name.empty() && iequals(name, machine_name));
}

OriginPolicy::OriginPolicy(std::string_view extra_origins) {
  for (size_t start = 0; start <= extra_origins.size();) {
    auto comma = extra_origins.find(',', start);
    if (comma == std::string_view::npos) comma = extra_origins.size();
    auto entry = trim(extra_origins.substr(start, comma - start));
    if (!entry.empty()) patterns_.push_back(std::move(entry));
    start = comma + 1;
  }
  for (const char* p : {"app://*", "file://*", "tauri://*", "vscode-webview://*"}) {
    patterns_.push_back(p);
  }
}

bool OriginPolicy::allowed(std::string_view origin) const {
  return local_web_origin(origin) ||
         std::any_of(patterns_.begin(), patterns_.end(),
                     [&](const std::string& p) { return wildcard_match(p, origin); });
}

}  // namespace heron::http
