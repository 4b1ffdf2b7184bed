#pragma once
// Python operators on template values: str()/repr(), ==, <, arithmetic, `in`, len(),
// iteration, subscription and slicing — with Python's results and TypeError messages.
#include <optional>
#include <string>

#include "heron/template/value.h"

namespace heron::chat::jinja {

// Raises the UndefinedError (or SecurityError) an undefined value carries.
[[noreturn]] void undefined_error(const Value& v);

// d, when Python's int(), math.floor or math.ceil accept it: infinity raises
// OverflowError and NaN ValueError, with Python's messages.
double require_int_convertible(double d);

void append_str(std::string& out, const Value& v);  // out += str(v)
// markupsafe.escape of a str: & < > " ' as HTML entities.
void append_html_escaped(std::string& out, std::string_view s);
std::string to_str(const Value& v);
std::string repr(const Value& v);

bool equals(const Value& a, const Value& b);
// Python's a < b; throws TypeError for unorderable types. op names the operator in errors.
bool less(const Value& a, const Value& b, const char* op = "<");

enum class BinOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
Value binary(BinOp op, const Value& a, const Value& b);
Value negate(const Value& v);
Value positive(const Value& v);

bool contains(const Value& container, const Value& item);
size_t length(const Value& v);
// The items `for x in v` visits: characters of a string, keys of a dict, list items.
std::shared_ptr<const ValueList> iterate(const Value& v);

// obj[key] for lists, tuples, strings and dicts; nullopt where Python raises
// TypeError/KeyError/IndexError (the sandbox then tries an attribute).
std::optional<Value> subscript(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

}  // namespace heron::chat::jinja
