#pragma once
// json.dumps(value, ensure_ascii, indent, separators, sort_keys) for template values.
#include <optional>
#include <string>
#include <utility>

#include "heron/template/value.h"

namespace heron::chat::jinja {

struct JsonOptions {
  std::optional<std::string> indent;  // nullopt: one line
  std::optional<std::pair<std::string, std::string>> separators;
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape non-ASCII as \uXXXX
};
std::string json_dumps(const Value& v, const JsonOptions& options);

}  // namespace heron::chat::jinja
