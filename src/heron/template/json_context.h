#pragma once
// The render context's JSON as template values, read in place: strings are borrowed,
// objects become Dicts that look their members up in the JSON, arrays become lists of
// those. Everything made lives in the render's JsonPool.
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

}  // namespace heron::chat::jinja
