// Number filters: int and float (Python's parsing rules), abs, round (ties to even).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/filter_impl.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja::filters {

// Python float(str): surrounding whitespace, underscores between digits, inf/nan.
static std::optional<double> parse_float(const std::string& text) {
  std::string s = py::strip(text, std::nullopt, py::Side::Both);
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    clean.push_back(s[i]);
  }
  if (clean.empty()) return std::nullopt;
  std::string lower = py::lower(clean);
  size_t sign = lower[0] == '+' || lower[0] == '-' ? 1 : 0;
  std::string body = lower.substr(sign);
  if (body == "inf" || body == "infinity" || body == "nan") {
    double d = body == "nan" ? NAN : INFINITY;
    return lower[0] == '-' ? -d : d;
  }
  if (body.find_first_not_of("0123456789.e+-") != std::string::npos) return std::nullopt;
  if (body.find('x') != std::string::npos) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  return d;
}

// Python int(str, base).
static std::optional<int64_t> parse_int(const std::string& text, int base) {
  std::string s = py::strip(text, std::nullopt, py::Side::Both);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if ((base == 16 || base == 8 || base == 2 || base == 0) && i + 1 < s.size() && s[i] == '0') {
    char p = static_cast<char>(s[i + 1] | 0x20);
    int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed && (base == 0 || base == prefixed)) {
      base = prefixed;
      i += 2;
      if (i < s.size() && s[i] == '_') ++i;
    }
  }
  if (base == 0) base = 10;
  if (i >= s.size()) return std::nullopt;
  int64_t value = 0;
  bool prev_underscore = true;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      if (prev_underscore) return std::nullopt;
      prev_underscore = true;
      continue;
    }
    int d = c >= '0' && c <= '9'                     ? c - '0'
            : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10
                                                     : 99;
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value)) {
      return std::nullopt;
    }
    prev_underscore = false;
  }
  if (prev_underscore) return std::nullopt;
  return negative ? -value : value;
}

// trunc(d) as an int64. Python's int() would give a big integer; heron's ints are 64-bit,
// so a value outside that range is an error rather than a cast with undefined behaviour.
Value truncated_int(double d) {
  const double t = std::trunc(d);
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) {
    fail("OverflowError", "int: " + std::to_string(d) + " does not fit a 64-bit integer");
  }
  return Value(static_cast<int64_t>(t));
}

Value f_int(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("int", a, {"default", "base"});
  const Value fallback = r.get(0) ? *r.get(0) : Value(int64_t{0});
  const int base = r.get(1) ? static_cast<int>(as_int_arg(*r.get(1))) : 10;
  if (v.is_undefined()) undefined_error(v);  // int(Undefined) raises
  if (v.is_string()) {
    if (auto i = parse_int(v.str(), base)) return Value(*i);
    if (auto d = parse_float(v.str()); d && std::isfinite(*d)) return truncated_int(*d);
    return fallback;
  }
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float() && std::isfinite(v.as_float())) return truncated_int(v.as_float());
  return fallback;
}

Value f_float(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("float", a, {"default"});
  const Value fallback = r.get(0) ? *r.get(0) : Value(0.0);
  if (v.is_undefined()) undefined_error(v);  // float(Undefined) raises
  if (v.is_number()) return Value(v.as_float());
  if (v.is_string()) {
    if (auto d = parse_float(v.str())) return Value(*d);
  }
  return fallback;
}

Value f_abs(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader("abs", a, {});
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_undefined()) undefined_error(v);
  type_error("bad operand type for abs(): '" + std::string(v.type_name()) + "'");
}

// Python round(x, n): correctly rounded, ties to even.
static double py_round(double x, int64_t n) {
  if (!std::isfinite(x)) return x;
  if (n > 300) return x;
  if (n >= 0) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(n), x);
    return std::strtod(buf, nullptr);
  }
  const double p = std::pow(10.0, static_cast<double>(-n));
  double y = x / p;
  double r = std::nearbyint(y);
  return r * p;
}

Value f_round(Interpreter&, const Value& v, CallArgs& a) {
  ArgReader r("round", a, {"precision", "method"});
  const int64_t precision = r.get(0) ? as_int_arg(*r.get(0)) : 0;
  const std::string method = r.get(1) ? to_str(*r.get(1)) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    fail("FilterArgumentError", "method must be common, ceil or floor");
  }
  if (!v.is_number()) {
    if (v.is_undefined()) undefined_error(v);
    type_error("type " + std::string(v.type_name()) + " doesn't define __round__ method");
  }
  if (method == "common") {
    if (!v.is_float()) {
      if (precision >= 0) return Value(v.as_int());
      const double p = std::pow(10.0, static_cast<double>(-precision));
      return Value(
          static_cast<int64_t>(py_round(static_cast<double>(v.as_int()), precision) / p * p));
    }
    return Value(py_round(v.as_float(), precision));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = v.as_float() * scale;
  return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

}  // namespace heron::chat::jinja::filters
