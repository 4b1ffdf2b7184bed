// jinja2's builtin tests (jinja2/tests.py): `value is defined`, `is string`, ...
// Python's type model decides the answers: bool is a number, an undefined value is a
// sequence and iterable (it has len() and iteration), a generator is not a sequence.
#include <unordered_map>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"
#include "heron/template/interpreter.h"
#include "heron/template/ops.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

namespace {

const Value& arg(CallArgs& a, const char* test) {
  if (a.positional.empty()) {
    if (!a.kwargs.empty()) return a.kwargs.front().second;
    type_error(std::string("test_") + test + "() missing 1 required positional argument");
  }
  return a.positional[0];
}

bool t_defined(Interpreter&, const Value& v, CallArgs&) {
  return !v.is_undefined();
}
bool t_undefined(Interpreter&, const Value& v, CallArgs&) {
  return v.is_undefined();
}
bool t_none(Interpreter&, const Value& v, CallArgs&) {
  return v.is_none();
}
bool t_boolean(Interpreter&, const Value& v, CallArgs&) {
  return v.is_bool();
}
bool t_true(Interpreter&, const Value& v, CallArgs&) {
  return v.is_bool() && v.as_bool();
}
bool t_false(Interpreter&, const Value& v, CallArgs&) {
  return v.is_bool() && !v.as_bool();
}
bool t_integer(Interpreter&, const Value& v, CallArgs&) {
  return v.is_int();
}
bool t_float(Interpreter&, const Value& v, CallArgs&) {
  return v.is_float();
}
bool t_number(Interpreter&, const Value& v, CallArgs&) {
  return v.is_number();
}
bool t_string(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string();
}
bool t_mapping(Interpreter&, const Value& v, CallArgs&) {
  return v.is_dict();
}

bool t_sequence(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() || v.is_dict() || v.is_undefined() || v.is_sequence();
}

bool t_iterable(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() || v.is_dict() || v.is_undefined() || v.is_list();
}

bool t_callable(Interpreter&, const Value& v, CallArgs&) {
  return v.is_undefined() || (v.is_object() && v.object().callable());
}

bool t_lower(Interpreter&, const Value& v, CallArgs&) {
  return py::islower(to_str(v));
}
bool t_upper(Interpreter&, const Value& v, CallArgs&) {
  return py::isupper(to_str(v));
}

bool t_odd(Interpreter&, const Value& v, CallArgs&) {
  return equals(binary(BinOp::Mod, v, Value(int64_t{2})), Value(int64_t{1}));
}
bool t_even(Interpreter&, const Value& v, CallArgs&) {
  return equals(binary(BinOp::Mod, v, Value(int64_t{2})), Value(int64_t{0}));
}
bool t_divisibleby(Interpreter&, const Value& v, CallArgs& a) {
  return equals(binary(BinOp::Mod, v, arg(a, "divisibleby")), Value(int64_t{0}));
}

bool t_eq(Interpreter&, const Value& v, CallArgs& a) {
  return equals(v, arg(a, "eq"));
}
bool t_ne(Interpreter&, const Value& v, CallArgs& a) {
  return !equals(v, arg(a, "ne"));
}
bool t_lt(Interpreter&, const Value& v, CallArgs& a) {
  return less(v, arg(a, "lt"), "<");
}
bool t_le(Interpreter&, const Value& v, CallArgs& a) {
  const Value& o = arg(a, "le");
  return less(v, o, "<=") || equals(v, o);
}
bool t_gt(Interpreter&, const Value& v, CallArgs& a) {
  return less(arg(a, "gt"), v, ">");
}
bool t_ge(Interpreter&, const Value& v, CallArgs& a) {
  const Value& o = arg(a, "ge");
  return less(o, v, ">=") || equals(v, o);
}
bool t_in(Interpreter&, const Value& v, CallArgs& a) {
  return contains(arg(a, "in"), v);
}

// Python `is`: singletons and small ints compare by value, containers by identity.
bool t_sameas(Interpreter&, const Value& v, CallArgs& a) {
  const Value& o = arg(a, "sameas");
  if (v.kind() != o.kind()) return false;
  switch (v.kind()) {
    case Kind::None:
      return true;
    case Kind::Bool:
      return v.as_bool() == o.as_bool();
    case Kind::Int:
      return v.as_int() == o.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
    case Kind::Float:
    case Kind::Undefined:
      return false;
    default:
      return v.payload() == o.payload();
  }
}

bool t_escaped(Interpreter&, const Value&, CallArgs&) {
  return false;
}
bool t_filter(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() && find_filter(v.str()) != nullptr;
}
bool t_test(Interpreter&, const Value& v, CallArgs&) {
  return v.is_string() && find_test(v.str()) != nullptr;
}

const std::unordered_map<std::string_view, TestFn>& table() {
  static const std::unordered_map<std::string_view, TestFn> tests = {
      {"odd", t_odd},
      {"even", t_even},
      {"divisibleby", t_divisibleby},
      {"defined", t_defined},
      {"undefined", t_undefined},
      {"filter", t_filter},
      {"test", t_test},
      {"none", t_none},
      {"boolean", t_boolean},
      {"false", t_false},
      {"true", t_true},
      {"integer", t_integer},
      {"float", t_float},
      {"lower", t_lower},
      {"upper", t_upper},
      {"string", t_string},
      {"mapping", t_mapping},
      {"number", t_number},
      {"sequence", t_sequence},
      {"iterable", t_iterable},
      {"callable", t_callable},
      {"sameas", t_sameas},
      {"escaped", t_escaped},
      {"in", t_in},
      {"==", t_eq},
      {"eq", t_eq},
      {"equalto", t_eq},
      {"!=", t_ne},
      {"ne", t_ne},
      {">", t_gt},
      {"gt", t_gt},
      {"greaterthan", t_gt},
      {">=", t_ge},
      {"ge", t_ge},
      {"<", t_lt},
      {"lt", t_lt},
      {"lessthan", t_lt},
      {"<=", t_le},
      {"le", t_le},
  };
  return tests;
}

}  // namespace

TestFn find_test(std::string_view name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : it->second;
}

}  // namespace heron::chat::jinja
