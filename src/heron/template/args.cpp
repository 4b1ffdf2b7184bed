// ArgReader: binds positional and keyword arguments to a Python-style signature.
#include <string>

#include "heron/template/builtins.h"
#include "heron/template/failure.h"

namespace heron::chat::jinja {

ArgReader::ArgReader(const char* function, CallArgs& args, std::initializer_list<const char*> names)
    : slots_(names.size(), nullptr) {
  if (args.positional.size() > names.size()) {
    type_error(std::string(function) + "() takes at most " + std::to_string(names.size()) +
               " arguments (" + std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) slots_[i] = &args.positional[i];
  for (const auto& [key, value] : args.kwargs) {
    size_t i = 0;
    for (const char* name : names) {
      if (key == name) break;
      ++i;
    }
    if (i == names.size()) {
      type_error(std::string(function) + "() got an unexpected keyword argument '" + key + "'");
    }
    if (slots_[i]) {
      type_error(std::string(function) + "() got multiple values for argument '" + key + "'");
    }
    slots_[i] = &value;
  }
}

const Value* ArgReader::get(size_t index) const {
  return slots_[index];
}

const Value& ArgReader::get_or(size_t index, const Value& fallback) const {
  return slots_[index] ? *slots_[index] : fallback;
}

}  // namespace heron::chat::jinja
