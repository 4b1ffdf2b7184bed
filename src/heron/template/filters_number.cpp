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
  if (v.is_int() || v.is_bool()) return v.as_int() < 0 ? negate(v) : Value(v.as_int());
  if (v.is_undefined()) undefined_error(v);
  type_error("bad operand type for abs(): '" + std::string(v.type_name()) + "'");
}

// Python's float.__round__(n) for 0 <= n: glibc prints the exact binary value rounded
// half to even, which is the correctly rounded result Python computes.
static double round_decimals(double x, int64_t n) {
  const int digits = static_cast<int>(n);
  std::string text(static_cast<size_t>(std::snprintf(nullptr, 0, "%.*f", digits, x)) + 1, '\0');
  std::snprintf(text.data(), text.size(), "%.*f", digits, x);
  return std::strtod(text.c_str(), nullptr);
}

// Python's float.__round__(n) for n < 0, to a multiple of 10^k (k = -n): correctly rounded
// on the exact value, ties to even, decided on the exact digits of its integer part.
static double round_tens(double x, size_t k) {
  const double whole = std::trunc(x);
  std::string digits = py::integral_digits(whole);
  if (digits.size() <= k) digits.insert(0, k + 1 - digits.size(), '0');
  std::string head = digits.substr(0, digits.size() - k);
  const int tail = digits.compare(head.size(), k, cat("5", std::string(k - 1, '0')));
  // Above half, or exactly half with a fraction beyond it, or a tie with an odd head.
  const bool up = tail > 0 || (tail == 0 && (x != whole || (head.back() - '0') % 2 == 1));
  for (size_t i = head.size(); up && i-- > 0;) {
    if (head[i] != '9') {
      ++head[i];
      break;
    }
    head[i] = '0';
    if (i == 0) head.insert(head.begin(), '1');
  }
  return std::copysign(std::strtod(cat(head, "e", std::to_string(k)).c_str(), nullptr), x);
}

// Python round(x, n) of a float: CPython returns inf and nan as they are, x beyond 323
// digits and a signed zero below -308; a result past the largest double is an OverflowError.
static double py_round(double x, int64_t n) {
  if (!std::isfinite(x) || n > 323) return x;
  if (n < -308) return 0.0 * x;
  const double r = n >= 0 ? round_decimals(x, n) : round_tens(x, static_cast<size_t>(-n));
  if (std::isinf(r)) fail("OverflowError", "rounded value too large to represent");
  return r;
}

// Python round(i, n) of an int: exact, ties to even. The result may leave int64 (Python's
// ints are unbounded), which heron reports as an OverflowError.
static Value py_round_int(int64_t v, int64_t n) {
  if (n >= 0) return Value(v);
  if (n < -19) return Value(int64_t{0});  // |v| < 2^63 < 10^20 / 2
  uint64_t p = 1;
  for (int64_t k = 0; k < -n; ++k) p *= 10;  // at most 10^19 < 2^64
  const uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint64_t q = m / p;
  const uint64_t rest = m % p;
  if (rest > p - rest || (rest == p - rest && q % 2 == 1)) ++q;
  uint64_t rounded = 0;
  const uint64_t limit = v < 0 ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (__builtin_mul_overflow(q, p, &rounded) || rounded > limit) {
    fail("OverflowError", "integer result too large for this template engine");
  }
  return Value(v < 0 ? static_cast<int64_t>(0 - rounded) : static_cast<int64_t>(rounded));
}

// jinja2's ceil/floor methods: math.ceil/floor(value * 10**precision) / 10**precision,
// with the errors Python raises on the way.
static Value round_toward(const Value& v, int64_t precision, bool up) {
  // An int times the exact int 10**precision and back: the int itself, as a float.
  if (!v.is_float() && precision >= 0) return Value(static_cast<double>(v.as_int()));
  // 10**precision becomes a float, correctly rounded (strtod), or pow() when negative.
  if (precision > 308) fail("OverflowError", "int too large to convert to float");
  const double scale = precision >= 0
                           ? std::strtod(cat("1e", std::to_string(precision)).c_str(), nullptr)
                           : std::pow(10.0, static_cast<double>(precision));
  const double x = require_int_convertible(v.as_float() * scale);
  if (scale == 0) fail("ZeroDivisionError", "float division by zero");
  return Value((up ? std::ceil(x) : std::floor(x)) / scale);
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
  if (method != "common") return round_toward(v, precision, method == "ceil");
  if (!v.is_float()) return py_round_int(v.as_int(), precision);
  return Value(py_round(v.as_float(), precision));
}

}  // namespace heron::chat::jinja::filters
