#include "heron/template/ops.h"

#include <cmath>
#include <limits>

#include "heron/template/failure.h"
#include "heron/template/format.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

void undefined_error(const Value& v) {
  const auto* info = v.undefined_info();
  if (!info) fail("UndefinedError", "value is undefined");
  fail(info->hint.rfind("access to attribute", 0) == 0 ? "SecurityError" : "UndefinedError",
       info->message());
}

namespace {

void append_repr(std::string& out, const Value& v);

void append_items(std::string& out, const ValueList& items, bool tuple) {
  out.push_back(tuple ? '(' : '[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_repr(out, items[i]);
  }
  if (tuple && items.size() == 1) out.push_back(',');
  out.push_back(tuple ? ')' : ']');
}

void append_container(std::string& out, const Value& v) {
  if (v.is_list()) {
    if (v.list_kind() == ListKind::Generator) {
      out += "<generator object>";
    } else if (v.is_sequence()) {
      append_items(out, v.list(), v.list_kind() == ListKind::Tuple);
    } else {
      out += v.type_name();
      out.push_back('(');
      append_items(out, v.list(), false);
      out.push_back(')');
    }
    return;
  }
  out.push_back('{');
  bool first = true;
  for (const auto& [k, val] : v.dict().items()) {
    if (!first) out += ", ";
    first = false;
    append_repr(out, k);
    out += ": ";
    append_repr(out, val);
  }
  out.push_back('}');
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      out += "Undefined";
      return;
    case Kind::String:
      out += py::repr(v.str());
      return;
    case Kind::List:
    case Kind::Dict:
      append_container(out, v);
      return;
    default:
      append_str(out, v);
  }
}

bool both_numbers(const Value& a, const Value& b) {
  return a.is_number() && b.is_number();
}

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
  type_error(std::string("unsupported operand type(s) for ") + op + ": '" +
             std::string(a.type_name()) + "' and '" + std::string(b.type_name()) + "'");
}

void check_overflow(bool overflow) {
  if (overflow) fail("OverflowError", "integer result too large for this template engine");
}

Value repeat(const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value(std::string()) : Value(ValueList{}, seq.list_kind());
  const size_t unit = seq.is_string() ? seq.str().size() : seq.list().size() * sizeof(Value);
  if (unit && static_cast<uint64_t>(n) > max_build_bytes / unit) check_build(SIZE_MAX);
  if (seq.is_string()) {
    const auto& s = seq.str();
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) out += s;
    return Value(std::move(out));
  }
  const auto& items = seq.list();
  ValueList out;
  out.reserve(items.size() * static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), items.begin(), items.end());
  return Value(std::move(out), seq.list_kind());
}

bool is_sequence_list(const Value& v) {
  return v.is_sequence();
}

// CPython's float_divmod.
void float_divmod(double vx, double wx, double& div, double& mod) {
  mod = std::fmod(vx, wx);
  div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0.0) {
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    div = floordiv;
  } else {
    div = std::copysign(0.0, vx / wx);
  }
}

Value arith(BinOp op, const Value& a, const Value& b) {
  const bool ints = !a.is_float() && !b.is_float();
  if (ints) {
    const int64_t x = a.as_int(), y = b.as_int();
    int64_t r = 0;
    switch (op) {
      case BinOp::Add:
        check_overflow(__builtin_add_overflow(x, y, &r));
        return Value(r);
      case BinOp::Sub:
        check_overflow(__builtin_sub_overflow(x, y, &r));
        return Value(r);
      case BinOp::Mul:
        check_overflow(__builtin_mul_overflow(x, y, &r));
        return Value(r);
      case BinOp::Div:
        if (y == 0) fail("ZeroDivisionError", "division by zero");
        return Value(static_cast<double>(x) / static_cast<double>(y));
      case BinOp::FloorDiv:
      case BinOp::Mod: {
        if (y == 0) {
          fail("ZeroDivisionError",
               op == BinOp::Mod ? "integer modulo by zero" : "integer division or modulo by zero");
        }
        check_overflow(x == std::numeric_limits<int64_t>::min() && y == -1);
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          m += y;
          q -= 1;
        }
        return Value(op == BinOp::Mod ? m : q);
      }
      case BinOp::Pow: {
        if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
        int64_t result = 1, base = x;
        for (int64_t e = y; e > 0; e >>= 1) {
          if (e & 1) check_overflow(__builtin_mul_overflow(result, base, &result));
          if (e > 1) check_overflow(__builtin_mul_overflow(base, base, &base));
        }
        return Value(result);
      }
    }
  }
  const double x = a.as_float(), y = b.as_float();
  switch (op) {
    case BinOp::Add:
      return Value(x + y);
    case BinOp::Sub:
      return Value(x - y);
    case BinOp::Mul:
      return Value(x * y);
    case BinOp::Div:
      if (y == 0) fail("ZeroDivisionError", "float division by zero");
      return Value(x / y);
    case BinOp::FloorDiv:
    case BinOp::Mod: {
      if (y == 0) {
        fail("ZeroDivisionError",
             op == BinOp::Mod ? "float modulo" : "float floor division by zero");
      }
      double div, mod;
      float_divmod(x, y, div, mod);
      return Value(op == BinOp::Mod ? mod : div);
    }
    case BinOp::Pow: {
      if (x == 0 && y < 0) {
        fail("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      }
      if (x < 0 && y != std::floor(y)) fail("TypeError", "complex numbers are not supported");
      const double r = std::pow(x, y);
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) {
        fail("OverflowError", "(34, 'Numerical result out of range')");
      }
      return Value(r);
    }
  }
  return Value();
}

const char* op_symbol(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "** or pow()";
  }
  return "?";
}

}  // namespace

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return;
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += v.as_bool() ? "True" : "False";
      return;
    case Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Kind::Float:
      out += py::float_repr(v.as_float());
      return;
    case Kind::String:
      out += v.str();
      return;
    case Kind::List:
    case Kind::Dict:
      append_container(out, v);
      return;
    case Kind::Object:
      out += v.object().repr();
      return;
  }
}

std::string to_str(const Value& v) {
  if (v.is_string()) return v.str();
  std::string out;
  append_str(out, v);
  return out;
}

std::string repr(const Value& v) {
  std::string out;
  append_repr(out, v);
  return out;
}

bool equals(const Value& a, const Value& b) {
  if (both_numbers(a, b)) {
    if (!a.is_float() && !b.is_float()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return a.str() == b.str();
    case Kind::List: {
      if ((a.list_kind() == ListKind::Tuple) != (b.list_kind() == ListKind::Tuple)) return false;
      if (a.list_kind() != b.list_kind() && !(a.is_sequence() && b.is_sequence())) return false;
      if (a.list_kind() == ListKind::Generator || b.list_kind() == ListKind::Generator) {
        return a.payload() == b.payload();
      }
      const auto &x = a.list(), &y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::Dict: {
      const auto &x = a.dict(), &y = b.dict();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.items()) {
        Value other;
        if (!y.find(k, other) || !equals(v, other)) return false;
      }
      return true;
    }
    case Kind::Object:
      return a.payload() == b.payload();
    default:
      return false;
  }
}

bool less(const Value& a, const Value& b, const char* op) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  if (both_numbers(a, b)) {
    if (!a.is_float() && !b.is_float()) return a.as_int() < b.as_int();
    return a.as_float() < b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();
  if (is_sequence_list(a) && is_sequence_list(b) && a.list_kind() == b.list_kind()) {
    const auto &x = a.list(), &y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less(x[i], y[i], op);
    }
    return x.size() < y.size();
  }
  type_error(std::string("'") + op + "' not supported between instances of '" +
             std::string(a.type_name()) + "' and '" + std::string(b.type_name()) + "'");
}

void append_html_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
}

Value binary(BinOp op, const Value& a, const Value& b) {
  // str % x formats even an undefined x (it has __getitem__, so it counts as a mapping).
  if (op == BinOp::Mod && a.is_string()) return Value(printf_format(a.str(), b));
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  if (both_numbers(a, b)) return arith(op, a, b);
  switch (op) {
    case BinOp::Add:
      if (a.is_string()) {
        if (!b.is_string()) {
          if (a.is_markup()) {
            type_error("unsupported operand type(s) for +: 'Markup' and '" +
                       std::string(b.type_name()) + "'");
          }
          type_error("can only concatenate str (not \"" + std::string(b.type_name()) +
                     "\") to str");
        }
        std::string out;
        out.reserve(a.str().size() + b.str().size());
        if (a.is_markup() != b.is_markup()) {  // Markup.__add__ / __radd__ escape the str
          for (const Value* part : {&a, &b}) {
            if (part->is_markup()) {
              out += part->str();
            } else {
              append_html_escaped(out, part->str());
            }
          }
          return Value::markup(std::move(out));
        }
        out += a.str();
        out += b.str();
        return a.is_markup() ? Value::markup(std::move(out)) : Value(std::move(out));
      }
      if (is_sequence_list(a)) {
        if (!is_sequence_list(b) || a.list_kind() != b.list_kind()) {
          type_error("can only concatenate " + std::string(a.type_name()) + " (not \"" +
                     std::string(b.type_name()) + "\") to " + std::string(a.type_name()));
        }
        ValueList out(a.list());
        out.insert(out.end(), b.list().begin(), b.list().end());
        return Value(std::move(out), a.list_kind());
      }
      break;
    case BinOp::Mul:
      if ((a.is_string() || is_sequence_list(a)) && (b.is_int() || b.is_bool())) {
        return repeat(a, b.as_int());
      }
      if ((b.is_string() || is_sequence_list(b)) && (a.is_int() || a.is_bool())) {
        return repeat(b, a.as_int());
      }
      if (a.is_string() || b.is_string() || a.is_list() || b.is_list()) {
        const Value& other = a.is_string() || a.is_list() ? b : a;
        type_error("can't multiply sequence by non-int of type '" + std::string(other.type_name()) +
                   "'");
      }
      break;
    case BinOp::Mod:
      if (a.is_string()) return Value(printf_format(a.str(), b));
      break;
    default:
      break;
  }
  unsupported(op_symbol(op), a, b);
}

double require_int_convertible(double d) {
  if (std::isinf(d)) fail("OverflowError", "cannot convert float infinity to integer");
  if (std::isnan(d)) fail("ValueError", "cannot convert float NaN to integer");
  return d;
}

Value negate(const Value& v) {
  if (v.is_undefined()) undefined_error(v);
  if (v.is_float()) return Value(-v.as_float());
  if (v.is_int() || v.is_bool()) {
    int64_t r;
    check_overflow(__builtin_sub_overflow(int64_t{0}, v.as_int(), &r));
    return Value(r);
  }
  type_error("bad operand type for unary -: '" + std::string(v.type_name()) + "'");
}

Value positive(const Value& v) {
  if (v.is_undefined()) undefined_error(v);
  if (v.is_float()) return v;
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  type_error("bad operand type for unary +: '" + std::string(v.type_name()) + "'");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::Undefined:
      return false;
    case Kind::String:
      if (!item.is_string()) {
        if (item.is_undefined()) undefined_error(item);
        type_error("'in <string>' requires string as left operand, not " +
                   std::string(item.type_name()));
      }
      return container.str().find(item.str()) != std::string::npos;
    case Kind::List:
      for (const auto& v : container.list()) {
        if (equals(v, item)) return true;
      }
      return false;
    case Kind::Dict:
      if (item.is_list() || item.is_dict())
        type_error(cat("unhashable type: '", item.type_name(), "'"));
      return container.dict().contains(item);
    default:
      type_error("argument of type '" + std::string(container.type_name()) + "' is not iterable");
  }
}

size_t length(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return 0;
    case Kind::String:
      return py::length(v.str());
    case Kind::List:
      if (v.list_kind() == ListKind::Generator) break;
      return v.list().size();
    case Kind::Dict:
      return v.dict().size();
    default:
      break;
  }
  type_error("object of type '" + std::string(v.type_name()) + "' has no len()");
}

std::shared_ptr<const ValueList> iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: {
      static const auto empty = std::make_shared<const ValueList>();
      return empty;
    }
    case Kind::List:
      return v.list_ptr();
    case Kind::String: {
      ValueList chars;
      const auto& s = v.str();
      for (size_t i = 0; i < s.size();) {
        size_t n = 1;
        while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
        chars.emplace_back(s.substr(i, n));
        i += n;
      }
      return std::make_shared<const ValueList>(std::move(chars));
    }
    case Kind::Dict: {
      ValueList keys;
      keys.reserve(v.dict().size());
      for (const auto& item : v.dict().items()) keys.push_back(item.first);
      return std::make_shared<const ValueList>(std::move(keys));
    }
    default:
      type_error("'" + std::string(v.type_name()) + "' object is not iterable");
  }
}

namespace {

// Byte offset of code point `index` in s (index within [0, length]).
size_t cp_offset(const std::string& s, size_t index) {
  size_t i = 0;
  for (; i < s.size() && index > 0; --index) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

bool index_value(const Value& v, int64_t& out) {
  if (v.is_int() || v.is_bool()) {
    out = v.as_int();
    return true;
  }
  return false;
}

}  // namespace

std::optional<Value> subscript(const Value& obj, const Value& key) {
  if (obj.is_dict()) {
    Value found;
    if (obj.dict().find(key, found)) return found;
    return std::nullopt;
  }
  int64_t index;
  if (!index_value(key, index)) return std::nullopt;
  if (obj.is_sequence()) {
    const auto& items = obj.list();
    const auto n = static_cast<int64_t>(items.size());
    if (index < 0) index += n;
    if (index < 0 || index >= n) return std::nullopt;
    return items[static_cast<size_t>(index)];
  }
  if (obj.is_string()) {
    const auto& s = obj.str();
    if (py::is_ascii(s)) {
      const auto n = static_cast<int64_t>(s.size());
      if (index < 0) index += n;
      if (index < 0 || index >= n) return std::nullopt;
      return Value(std::string(1, s[static_cast<size_t>(index)]));
    }
    const auto n = static_cast<int64_t>(py::length(s));
    if (index < 0) index += n;
    if (index < 0 || index >= n) return std::nullopt;
    size_t begin = cp_offset(s, static_cast<size_t>(index));
    size_t end = cp_offset(s, static_cast<size_t>(index) + 1);
    return Value(s.substr(begin, end - begin));
  }
  return std::nullopt;
}

Value slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto bound = [](const Value& v, bool& given) -> int64_t {
    given = !(v.is_none() || v.is_undefined());
    if (!given) return 0;
    int64_t out;
    if (!index_value(v, out)) {
      type_error("slice indices must be integers or None or have an __index__ method");
    }
    return out;
  };
  bool has_start, has_stop, has_step;
  int64_t start = bound(start_v, has_start), stop = bound(stop_v, has_stop);
  int64_t step = bound(step_v, has_step);
  if (!has_step) step = 1;
  if (step == 0) fail("ValueError", "slice step cannot be zero");

  std::u32string cps;
  const bool is_str = obj.is_string();
  const bool ascii = is_str && py::is_ascii(obj.str());
  int64_t n;
  if (is_str) {
    if (!ascii) cps = py::decode(obj.str());
    n = static_cast<int64_t>(ascii ? obj.str().size() : cps.size());
  } else if (obj.is_sequence()) {
    n = static_cast<int64_t>(obj.list().size());
  } else {
    // jinja2 compiles x[a:b] to a plain Python subscript (no sandbox fallback).
    if (obj.is_undefined()) undefined_error(obj);
    if (obj.is_dict()) type_error("unhashable type: 'slice'");
    type_error(cat("'", obj.type_name(), "' object is not subscriptable"));
  }
  // PySlice_AdjustIndices
  if (!has_start) {
    start = step < 0 ? n - 1 : 0;
  } else if (start < 0) {
    start += n;
    if (start < 0) start = step < 0 ? -1 : 0;
  } else if (start >= n) {
    start = step < 0 ? n - 1 : n;
  }
  if (!has_stop) {
    stop = step < 0 ? -1 : n;
  } else if (stop < 0) {
    stop += n;
    if (stop < 0) stop = step < 0 ? -1 : 0;
  } else if (stop >= n) {
    stop = step < 0 ? n - 1 : n;
  }
  if (is_str) {
    std::string out;
    if (ascii && step == 1)
      return Value(start < stop ? obj.str().substr(static_cast<size_t>(start),
                                                   static_cast<size_t>(stop - start))
                                : std::string());
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (ascii) {
        out.push_back(obj.str()[static_cast<size_t>(i)]);
      } else {
        py::append_utf8(out, cps[static_cast<size_t>(i)]);
      }
    }
    return Value(std::move(out));
  }
  ValueList out;
  const auto& items = obj.list();
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push_back(items[static_cast<size_t>(i)]);
  }
  return Value(std::move(out), obj.list_kind());
}

}  // namespace heron::chat::jinja
