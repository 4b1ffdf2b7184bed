#include "heron/metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace heron::metrics {

namespace {

// A letter or underscore: what names may start with.
bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Backslash and line feed always; double quotes inside a label value's quotes.
std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_word_start(name[0]) || name[0] == ':')) return false;
  for (char c : name) {
    if (!is_word_start(c) && !is_digit(c) && c != ':') return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || !is_word_start(name[0]) || name.starts_with("__")) return false;
  for (char c : name) {
    if (!is_word_start(c) && !is_digit(c)) return false;
  }
  return true;
}

std::string escape_label_value(std::string_view value) {
  return escape(value, /*quotes=*/true);
}

std::string escape_help(std::string_view help) {
  return escape(help, /*quotes=*/false);
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Counts are the usual values: print them without an exponent up to 2^53, where doubles
  // stop holding every integer.
  if (value == std::trunc(value) && std::fabs(value) <= 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return {buf, r.ptr};
}

void write_sample(std::string& out, std::string_view name, const std::vector<std::string>& labels,
                  const std::vector<std::string>& values, double value,
                  const std::pair<std::string, std::string>& extra) {
  out += name;
  if (!labels.empty() || !extra.first.empty()) {
    out += '{';
    bool first = true;
    auto label = [&](const std::string& key, const std::string& v) {
      if (!first) out += ',';
      first = false;
      out += key;
      out += "=\"";
      out += escape_label_value(v);
      out += '"';
    };
    for (size_t i = 0; i < labels.size(); ++i) label(labels[i], values[i]);
    if (!extra.first.empty()) label(extra.first, extra.second);
    out += '}';
  }
  out += ' ';
  out += format_value(value);
  out += '\n';
}

}  // namespace heron::metrics
