#pragma once
// Python string formatting: `fmt % args` (printf style, also the `format` filter) and
// str.format(*args, **kwargs) with the format-spec mini-language.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heron/template/value.h"

namespace heron::chat::jinja {

// fmt % args: a tuple supplies several arguments, a dict named ones (%(name)s).
std::string printf_format(const std::string& fmt, const Value& args);

// format(value, spec)
std::string format_spec(const Value& value, std::string_view spec);

// fmt.format(*args, **kwargs); `lookup` resolves {0.attr} / {0[key]} like the sandbox.
std::string str_format(const std::string& fmt, const ValueList& args,
                       const std::vector<std::pair<std::string, Value>>& kwargs);

}  // namespace heron::chat::jinja
