#include "heron/cli/human_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace heron::cli {

std::string human_bytes(int64_t b) {
  static const struct {
    double scale;
    const char* unit;
  } kUnits[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}};
  for (const auto& u : kUnits) {
    if (static_cast<double>(b) < u.scale) continue;
    const double v = static_cast<double>(b) / u.scale;
    char buf[32];
    if (v >= 100 || v == std::trunc(v)) {
      std::snprintf(buf, sizeof buf, "%d %s", static_cast<int>(v), u.unit);
    } else {
      std::snprintf(buf, sizeof buf, "%.1f %s", v, u.unit);
    }
    return buf;
  }
  return std::to_string(b) + " B";
}

namespace {

// Ollama's format.humanDuration.
std::string human_duration(std::chrono::nanoseconds d) {
  const double secs = std::chrono::duration<double>(d).count();
  const auto seconds = static_cast<int64_t>(secs);
  if (seconds < 1) return "Less than a second";
  if (seconds == 1) return "1 second";
  if (seconds < 60) return std::to_string(seconds) + " seconds";
  const int64_t minutes = seconds / 60;
  if (minutes == 1) return "About a minute";
  if (minutes < 60) return std::to_string(minutes) + " minutes";
  const auto hours = static_cast<int64_t>(std::round(secs / 3600));
  if (hours == 1) return "About an hour";
  if (hours < 48) return std::to_string(hours) + " hours";
  if (hours < 24 * 7 * 2) return std::to_string(hours / 24) + " days";
  if (hours < 24 * 30 * 2) return std::to_string(hours / 24 / 7) + " weeks";
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24 / 30) + " months";
  return std::to_string(hours / 24 / 365) + " years";
}

}  // namespace

std::string human_time(SystemTime t, SystemTime now) {
  const auto delta = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t);
  if (std::chrono::duration_cast<std::chrono::hours>(delta).count() / 24 / 365 < -20) {
    return "Forever";
  }
  if (delta < std::chrono::nanoseconds(0)) return human_duration(-delta) + " from now";
  return human_duration(delta) + " ago";
}

namespace {

// Go's fmtFrac + fmtInt: `v` in units of 10^-digits, trailing zeros dropped.
std::string with_fraction(uint64_t v, int digits) {
  std::string frac;
  bool printed = false;
  for (int i = 0; i < digits; ++i) {
    const uint64_t d = v % 10;
    printed = printed || d != 0;
    if (printed) frac.insert(frac.begin(), static_cast<char>('0' + d));
    v /= 10;
  }
  return std::to_string(v) + (printed ? "." + frac : "");
}

}  // namespace

std::string go_duration(int64_t ns) {
  if (ns == 0) return "0s";
  const std::string sign = ns < 0 ? "-" : "";
  // The magnitude as unsigned: -INT64_MIN does not fit an int64_t.
  const uint64_t u = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (u < 1000) return sign + std::to_string(u) + "ns";
  if (u < 1000000) return sign + with_fraction(u, 3) + "µs";
  if (u < 1000000000) return sign + with_fraction(u, 6) + "ms";
  const uint64_t whole_minutes = u / 60000000000;
  const std::string seconds = with_fraction(u % 60000000000, 9) + "s";
  if (whole_minutes == 0) return sign + seconds;
  const uint64_t hours = whole_minutes / 60;
  const std::string minutes = std::to_string(whole_minutes % 60) + "m" + seconds;
  return sign + (hours > 0 ? std::to_string(hours) + "h" : "") + minutes;
}

std::optional<SystemTime> parse_rfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  size_t i = 19;
  int64_t nanos = 0;
  if (i < text.size() && text[i] == '.') {
    int digits = 0;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (digits++ < 9) nanos = nanos * 10 + (text[i] - '0');
    }
    for (; digits < 9; ++digits) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(text.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2 || text.size() != i + 6) {
      return std::nullopt;
    }
    offset_seconds = (text[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  } else if (i + 1 != text.size() || (text[i] != 'Z' && text[i] != 'z')) {
    return std::nullopt;
  }
  const time_t t = timegm(&tm) - offset_seconds;
  return std::chrono::system_clock::from_time_t(t) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::nanoseconds(nanos));
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  auto width = [](const std::string& s) {  // code points, not bytes
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], width(row[c]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - width(row[c]) + 4, ' ');
    }
    out << line << "\n";
  }
}

}  // namespace heron::cli
