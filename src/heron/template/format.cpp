#include "heron/template/format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

#include "heron/template/failure.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Width/precision digits, saturating far beyond any size check_build() allows.
long accumulate_digit(long acc, char c) {
  return std::min(std::max(acc, 0L) * 10 + (c - '0'), 1L << 30);
}

// Pads `body` (sign already inside) to `width` code points.
std::string pad(std::string body, long width, char align, char fill, size_t sign_len = 0) {
  const long len = static_cast<long>(py::length(body));
  if (width <= len) return body;
  check_build(static_cast<size_t>(width));
  const auto n = static_cast<size_t>(width - len);
  std::string fill_s;
  for (size_t k = 0; k < n; ++k) fill_s.push_back(fill);
  switch (align) {
    case '<':
      return body + fill_s;
    case '^': {
      std::string left(fill_s.substr(0, n / 2)), right(fill_s.substr(n / 2));
      return left + body + right;
    }
    case '=':
      return body.substr(0, sign_len) + fill_s + body.substr(sign_len);
    default:
      return fill_s + body;
  }
}

std::string c_format(const std::string& spec, double d) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, spec.c_str(), d);
  if (n < 0) return "";
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec.c_str(), d);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string int_digits(int64_t v, char type) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
  const char* digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  do {
    out.push_back(digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  } while (u);
  std::reverse(out.begin(), out.end());
  return out;
}

// A precision on an integer conversion: at least that many digits, zero-padded.
void pad_digits(std::string& digits, int precision) {
  if (precision <= 0 || digits.size() >= static_cast<size_t>(precision)) return;
  check_build(static_cast<size_t>(precision));
  digits.insert(0, static_cast<size_t>(precision) - digits.size(), '0');
}

std::string group_digits(const std::string& digits, char sep, size_t every) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i && (n - i) % every == 0) out.push_back(sep);
    out.push_back(digits[i]);
  }
  return out;
}

// A number's text without sign, for printf (%d %x %f ...) and format specs.
std::string float_body(double d, char type, int precision, bool alt) {
  if (std::isinf(d)) return type >= 'A' && type <= 'Z' ? "INF" : "inf";
  if (std::isnan(d)) return type >= 'A' && type <= 'Z' ? "NAN" : "nan";
  check_build(static_cast<size_t>(precision));
  // `type` comes from the template; only a float conversion may reach snprintf's format
  // (fuzzing found `{:.2j}` passing "%.2j", undefined behaviour in printf).
  std::string spec = "%";
  if (alt) spec += '#';
  spec += '.' + std::to_string(precision) + type;
  return c_format(spec, std::fabs(d));
}

double number_as_float(const Value& v, char conv) {
  if (v.is_number()) return v.as_float();
  if (v.is_undefined()) undefined_error(v);
  type_error(std::string("must be real number, not ") + std::string(v.type_name()) +
             (conv ? "" : ""));
}

// An argument Python requires to be an int (or bool); anything else raises `message`.
int64_t int_arg(const Value& v, const std::string& message) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  if (v.is_undefined()) undefined_error(v);
  type_error(message);
}

// The digits of int(v) for %d %i %u, and its sign. Python's int is unbounded, so a float
// beyond int64 keeps all its digits rather than being cast (undefined behaviour).
std::string decimal_arg(const Value& v, char conv, bool& negative) {
  if (v.is_int() || v.is_bool()) {
    negative = v.as_int() < 0;
    return int_digits(v.as_int(), 'd');
  }
  if (v.is_float()) {
    const double t = std::trunc(require_int_convertible(v.as_float()));
    negative = t < 0;
    return py::integral_digits(t);
  }
  if (v.is_undefined()) undefined_error(v);
  type_error(std::string("%") + conv + " format: a real number is required, not " +
             std::string(v.type_name()));
}

// %c and {:c}: a code point, which Python checks against the Unicode range.
void append_code_point(std::string& out, int64_t v) {
  if (v < 0 || v >= 0x110000) fail("OverflowError", "%c arg not in range(0x110000)");
  py::append_utf8(out, static_cast<char32_t>(v));
}

}  // namespace

std::string printf_format(const std::string& fmt, const Value& args) {
  const bool tuple = args.is_list() && args.list_kind() == ListKind::Tuple;
  const bool mapping = args.is_dict();
  ValueList single;
  const ValueList* list = &single;
  if (tuple) {
    list = &args.list();
  } else {
    single.push_back(args);
  }
  size_t next = 0;
  bool used_mapping = false;
  auto next_arg = [&]() -> const Value& {
    if (next >= list->size()) type_error("not enough arguments for format string");
    return (*list)[next++];
  };
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) fail("ValueError", "incomplete format");
    const Value* arg = nullptr;
    Value keyed;
    if (fmt[i] == '(') {
      if (!mapping) type_error("format requires a mapping");
      size_t depth = 1, start = ++i;
      while (i < fmt.size() && depth) {
        depth += fmt[i] == '(' ? 1 : fmt[i] == ')' ? -1 : 0;
        if (depth) ++i;
      }
      if (i >= fmt.size()) fail("ValueError", "incomplete format key");
      std::string key = fmt.substr(start, i - start);
      if (!args.dict().find(std::string_view(key), keyed)) fail("KeyError", py::repr(key));
      arg = &keyed;
      used_mapping = true;
      ++i;
    }
    bool left = false, zero = false, plus = false, space = false, alt = false;
    for (; i < fmt.size(); ++i) {
      char c = fmt[i];
      if (c == '-') {
        left = true;
      } else if (c == '0') {
        zero = true;
      } else if (c == '+') {
        plus = true;
      } else if (c == ' ') {
        space = true;
      } else if (c == '#') {
        alt = true;
      } else {
        break;
      }
    }
    long width = -1;
    if (i < fmt.size() && fmt[i] == '*') {
      const int64_t w = int_arg(next_arg(), "* wants int");
      if (w < 0) left = true;
      // -INT64_MIN overflows; any width that large fails check_build below anyway.
      width = w == INT64_MIN ? INT64_MAX : static_cast<long>(w < 0 ? -w : w);
      ++i;
    } else {
      for (; i < fmt.size() && is_digit(fmt[i]); ++i) width = accumulate_digit(width, fmt[i]);
    }
    int precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      precision = 0;
      if (i < fmt.size() && fmt[i] == '*') {
        const int64_t p = int_arg(next_arg(), "* wants int");
        if (p > INT_MAX || p < INT_MIN)
          fail("OverflowError", "Python int too large to convert to C int");
        precision = p < 0 ? -1 : static_cast<int>(p);  // Python ignores a negative precision
        ++i;
      } else {
        for (; i < fmt.size() && is_digit(fmt[i]); ++i)
          precision = static_cast<int>(accumulate_digit(precision, fmt[i]));
      }
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) fail("ValueError", "incomplete format");
    const char conv = fmt[i];
    if (conv == '%') {
      out.push_back('%');
      continue;
    }
    if (!arg) arg = mapping && !tuple ? &args : &next_arg();
    std::string body;
    std::string sign;
    bool numeric = false;
    switch (conv) {
      case 's':
      case 'r':
      case 'a': {
        body = conv == 's' ? to_str(*arg) : repr(*arg);
        if (precision >= 0) {
          auto cps = py::decode(body);
          if (cps.size() > static_cast<size_t>(precision)) {
            body = py::encode(std::u32string_view(cps).substr(0, static_cast<size_t>(precision)));
          }
        }
        break;
      }
      case 'd':
      case 'i':
      case 'u': {
        numeric = true;
        bool negative = false;
        body = decimal_arg(*arg, conv, negative);
        pad_digits(body, precision);
        sign = negative ? "-" : plus ? "+" : space ? " " : "";
        break;
      }
      case 'x':
      case 'X':
      case 'o': {
        numeric = true;
        const int64_t v =
            int_arg(*arg, std::string("%") + conv + " format: an integer is required, not " +
                              std::string(arg->type_name()));
        body = int_digits(v, conv);
        pad_digits(body, precision);
        if (alt) body.insert(0, conv == 'o' ? "0o" : conv == 'x' ? "0x" : "0X");
        sign = v < 0 ? "-" : plus ? "+" : space ? " " : "";
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        numeric = true;
        double d = number_as_float(*arg, conv);
        body = float_body(d, conv, precision < 0 ? 6 : precision, alt);
        sign = std::signbit(d) && !std::isnan(d) ? "-" : plus ? "+" : space ? " " : "";
        break;
      }
      case 'c': {
        if (arg->is_string()) {
          if (py::length(arg->str()) != 1) type_error("%c requires int or char");
          body = arg->str();
        } else {
          append_code_point(body, int_arg(*arg, "%c requires int or char"));
        }
        break;
      }
      default:
        fail("ValueError", std::string("unsupported format character '") + conv + "'");
    }
    std::string field = sign + body;
    const long len = static_cast<long>(py::length(field));
    if (width > len) {
      check_build(static_cast<size_t>(width));
      const auto n = static_cast<size_t>(width - len);
      if (left) {
        field.append(n, ' ');
      } else if (zero && numeric) {
        field.insert(sign.size(), n, '0');
      } else {
        field.insert(0, n, ' ');
      }
    }
    out += field;
  }
  // Python skips this check for any argument with __getitem__ (list, dict, undefined...).
  const bool indexable = args.is_list() || args.is_dict() || args.is_undefined();
  if (!tuple && !indexable && next == 0 && !used_mapping) {
    type_error("not all arguments converted during string formatting");
  }
  if (tuple && next < list->size()) {
    type_error("not all arguments converted during string formatting");
  }
  return out;
}

std::string format_spec(const Value& value, std::string_view spec) {
  // [[fill]align][sign][z][#][0][width][grouping][.precision][type]
  size_t i = 0;
  char fill = ' ', align = 0, sign = '-';
  bool alt = false, zero = false;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (spec.size() >= 2 && is_align(spec[1])) {
    fill = spec[0], align = spec[1], i = 2;
  } else if (!spec.empty() && is_align(spec[0])) {
    align = spec[0], i = 1;
  }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  if (i < spec.size() && spec[i] == 'z') ++i;
  if (i < spec.size() && spec[i] == '#') alt = true, ++i;
  if (i < spec.size() && spec[i] == '0') zero = true, ++i;
  long width = -1;
  for (; i < spec.size() && is_digit(spec[i]); ++i) width = accumulate_digit(width, spec[i]);
  char grouping = 0;
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) grouping = spec[i++];
  int precision = -1;
  if (i < spec.size() && spec[i] == '.') {
    precision = 0;
    for (++i; i < spec.size() && is_digit(spec[i]); ++i)
      precision = static_cast<int>(accumulate_digit(precision, spec[i]));
  }
  char type = i < spec.size() ? spec[i++] : 0;
  if (i != spec.size()) fail("ValueError", "Invalid format specifier");
  if (zero && !align) fill = '0', align = '=';

  if (value.is_string() || (!value.is_number() && type == 0)) {
    std::string s = to_str(value);
    if (precision >= 0) {
      auto cps = py::decode(s);
      if (cps.size() > static_cast<size_t>(precision)) {
        s = py::encode(std::u32string_view(cps).substr(0, static_cast<size_t>(precision)));
      }
    }
    return pad(s, width, align ? align : '<', fill);
  }
  if (!value.is_number()) {
    if (value.is_undefined()) undefined_error(value);
    fail("ValueError", "Unknown format code '" + std::string(1, type) + "' for object of type '" +
                           std::string(value.type_name()) + "'");
  }
  std::string body;
  bool negative;
  const bool as_int =
      !value.is_float() && (type == 0 || type == 'd' || type == 'x' || type == 'X' || type == 'o' ||
                            type == 'b' || type == 'n' || type == 'c');
  if (as_int) {
    const int64_t v = value.as_int();
    negative = v < 0;
    if (type == 'c') {
      append_code_point(body, v);
    } else {
      body = int_digits(v, type == 0 || type == 'n' ? 'd' : type);
      if (grouping) body = group_digits(body, grouping, type == 0 || type == 'd' ? 3 : 4);
      if (alt && type != 0 && type != 'd' && type != 'n') {
        body.insert(0, std::string("0") + (type == 'X' ? 'X' : type));
      }
    }
  } else {
    const double d = value.as_float();
    negative = std::signbit(d) && !std::isnan(d);
    if (type == 0 && precision < 0) {
      body = py::float_repr(std::fabs(d));
    } else {
      char t = type == 0 ? 'g' : type == 'n' ? 'g' : type;
      // `type` comes from the template; only a float conversion may reach snprintf's
      // format (fuzzing found `{:.2j}` passing "%.2j", undefined behaviour in printf).
      if (std::string_view("eEfFgG%").find(t) == std::string_view::npos) {
        fail("ValueError",
             "Unknown format code '" + std::string(1, t) + "' for object of type 'float'");
      }
      const double shown = t == '%' ? std::fabs(d) * 100 : std::fabs(d);
      body = float_body(shown, t == '%' ? 'f' : t, precision < 0 ? 6 : precision, alt);
      if (t == '%') body += '%';
      if (type == 0 && body.find_first_of(".einf") == std::string::npos) body += ".0";
    }
    if (grouping) {
      size_t end = body.find_first_not_of("0123456789");
      if (end == std::string::npos) end = body.size();
      body = group_digits(body.substr(0, end), grouping, 3) + body.substr(end);
    }
  }
  std::string sign_s = negative ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
  return pad(sign_s + body, width, align ? align : '>', fill, sign_s.size());
}

std::string str_format(const std::string& fmt, const ValueList& args,
                       const std::vector<std::pair<std::string, Value>>& kwargs) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      fail("ValueError", "Single '}' encountered in format string");
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    size_t end = fmt.find('}', i);
    if (end == std::string::npos) fail("ValueError", "expected '}' before end of string");
    std::string field = fmt.substr(i + 1, end - i - 1);
    i = end;
    std::string spec, conversion;
    if (auto colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (auto bang = field.find('!'); bang != std::string::npos) {
      conversion = field.substr(bang + 1);
      field.resize(bang);
    }
    size_t name_end = field.find_first_of(".[");
    std::string name = field.substr(0, name_end);
    Value v;
    if (name.empty() || std::all_of(name.begin(), name.end(), is_digit)) {
      size_t index = name.empty() ? auto_index++ : std::stoul(name);
      if (index >= args.size()) {
        fail("IndexError", "Replacement index " + std::to_string(index) +
                               " out of range for positional args tuple");
      }
      v = args[index];
    } else {
      auto it = std::find_if(kwargs.begin(), kwargs.end(),
                             [&](const auto& kv) { return kv.first == name; });
      if (it == kwargs.end()) fail("KeyError", py::repr(name));
      v = it->second;
    }
    for (size_t p = name_end; p != std::string::npos && p < field.size();) {
      if (field[p] == '.') {
        size_t q = field.find_first_of(".[", p + 1);
        std::string attr = field.substr(p + 1, q == std::string::npos ? q : q - p - 1);
        auto got = subscript(v, Value(attr));
        v = got ? *got : Value::undefined_attr(v, attr);
        p = q;
      } else {
        size_t q = field.find(']', p);
        if (q == std::string::npos) fail("ValueError", "Missing ']' in format string");
        std::string key = field.substr(p + 1, q - p - 1);
        Value k = !key.empty() && std::all_of(key.begin(), key.end(), is_digit)
                      ? Value(static_cast<int64_t>(std::stoll(key)))
                      : Value(key);
        auto got = subscript(v, k);
        v = got ? *got : Value::undefined_key(v, k);
        p = q + 1;
      }
    }
    if (conversion == "r" || conversion == "a") {
      v = Value(repr(v));
    } else if (conversion == "s") {
      v = Value(to_str(v));
    }
    out += format_spec(v, spec);
  }
  return out;
}

}  // namespace heron::chat::jinja
