#pragma once
// Lookup tables of the filters, tests and globals the transformers environment provides,
// and the str/dict/list methods templates may call. Each family lives in its own file.
#include <string_view>

#include "heron/template/ast.h"

namespace heron::chat::jinja {

FilterFn find_filter(std::string_view name);  // null when jinja2 has no such filter
TestFn find_test(std::string_view name);

// Globals: range, dict, namespace, raise_exception, strftime_now, cycler, joiner.
bool find_global(std::string_view name, Value& out);

// A method of a str, list or dict value. Returns false when the type has no such
// attribute; sets `unsafe` for methods the immutable sandbox forbids (append, pop, ...).
bool has_method(const Value& self, std::string_view name, bool& unsafe);
Value call_method(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args);

// Reads arguments by position or keyword, like a Python signature.
class ArgReader {
 public:
  ArgReader(const char* function, CallArgs& args, std::initializer_list<const char*> names);
  // The argument at `index` (named names[index]); null when not given.
  const Value* get(size_t index) const;
  const Value& get_or(size_t index, const Value& fallback) const;

 private:
  std::vector<const Value*> slots_;
};

}  // namespace heron::chat::jinja
