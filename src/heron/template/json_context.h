#pragma once
// The render context's JSON as template values, read in place: strings are borrowed,
// objects become Dicts that look their members up in the JSON, arrays become lists of
// those. Everything made lives in the render's JsonPool.
#include <optional>
#include <vector>

#include "heron/template/value.h"

namespace heron::chat::jinja {

// The Dicts a render makes for context JSON objects, in blocks whose addresses stay put
// (each block is reserved to its final size before it is filled).
struct JsonPool {
  std::vector<std::vector<Dict>> blocks;
};

// Throws heron::Error for JSON a template cannot hold (binary data).
Value from_json(JsonPool& pool, const ContextJson& j);

// Python's bool() of what from_json makes of `j`, without making it; nullopt for binary
// data (the caller converts it, which raises the error).
inline std::optional<bool> json_truth(const ContextJson& j) {
  using Type = ContextJson::value_t;
  switch (j.type()) {
    case Type::null:
      return false;
    case Type::boolean:
      return j.get<bool>();
    case Type::number_integer:
      return j.get<int64_t>() != 0;
    case Type::number_unsigned:
      return j.get<uint64_t>() != 0;
    case Type::number_float:
      return j.get<double>() != 0.0;
    case Type::string:  // not j.empty(): nlohmann's is false for every string
      return !j.get_ref<const std::string&>().empty();
    case Type::array:
    case Type::object:
      return !j.empty();
    default:
      return std::nullopt;
  }
}

}  // namespace heron::chat::jinja
