#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace heron::server {

// RFC 3339 UTC with nanoseconds, as Ollama's created_at.
std::string rfc3339_now();
std::string rfc3339(std::chrono::system_clock::time_point t);
int64_t unix_seconds_now();
// Nanoseconds since `t`.
int64_t nanos_since(std::chrono::steady_clock::time_point t);

}  // namespace heron::server
