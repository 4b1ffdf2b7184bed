#include "heron/server/time_format.h"

#include <ctime>

namespace heron::server {

std::string rfc3339_now() {
  return rfc3339(std::chrono::system_clock::now());
}

std::string rfc3339(std::chrono::system_clock::time_point now) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09lldZ", static_cast<long long>(ns % 1000000000));
  return buf;
}

int64_t unix_seconds_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t nanos_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

}  // namespace heron::server
