#include "heron/server/keep_alive.h"

#include <cmath>
#include <cstdlib>

#include "heron/http/http_error.h"

namespace heron::server {

namespace {

// A century: any longer keep_alive means forever (as a negative one does), which also keeps
// the milliseconds clear of overflow, here and where they are added to the nanosecond clock.
constexpr double kForeverSeconds = 100.0 * 365 * 24 * 3600;

KeepAlive from_seconds(double s) {
  if (s < 0 || s >= kForeverSeconds) return {true, {}};
  return {false, std::chrono::milliseconds(static_cast<int64_t>(std::llround(s * 1000)))};
}

}  // namespace

KeepAlive parse_keep_alive(const std::string& text, const std::string& name) {
  auto fail = [&] {
    return http::bad_request(
        name + " must be a duration such as \"5m\", \"30s\" or \"-1\", got \"" + text + "\"");
  };
  if (text.empty()) throw fail();
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative || text[0] == '+') ++i;
  double total = 0;
  bool any = false;
  while (i < text.size()) {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      throw fail();
    }
    if (!std::isfinite(value) || value < 0) throw fail();
    i += used;
    size_t unit_end = i;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end]))) {
      ++unit_end;
    }
    const std::string unit = text.substr(i, unit_end - i);
    double scale = 0;
    if (unit.empty()) {
      if (any || unit_end != text.size()) throw fail();  // a bare number is seconds
      scale = 1;
    } else if (unit == "h") {
      scale = 3600;
    } else if (unit == "m") {
      scale = 60;
    } else if (unit == "s") {
      scale = 1;
    } else if (unit == "ms") {
      scale = 1e-3;
    } else if (unit == "us" || unit == "µs") {
      scale = 1e-6;
    } else if (unit == "ns") {
      scale = 1e-9;
    } else {
      throw fail();
    }
    total += value * scale;
    any = true;
    i = unit_end;
  }
  return from_seconds(negative ? -total : total);
}

KeepAlive parse_keep_alive(const nlohmann::json& value, const std::string& name) {
  if (value.is_number()) {
    const double s = value.get<double>();
    if (!std::isfinite(s)) throw http::bad_request(name + " must be a finite number");
    return from_seconds(s);
  }
  if (value.is_string()) return parse_keep_alive(value.get<std::string>(), name);
  throw http::bad_request(name + " must be a number of seconds or a duration string, got " +
                          std::string(value.type_name()));
}

KeepAlive default_keep_alive() {
  const char* env = std::getenv("HERON_KEEP_ALIVE");
  if (!env || !*env) return {};
  return parse_keep_alive(std::string(env), "$HERON_KEEP_ALIVE");
}

}  // namespace heron::server
