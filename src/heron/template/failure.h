#pragma once
// Runtime failures inside the template engine. Helpers throw Failure with a Python-style
// exception type and message; the interpreter catches it at the node being evaluated and
// rethrows a heron::Error that names the line and column.
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace heron::chat::jinja {

struct Failure : std::exception {
  Failure(std::string type_, std::string message_)
      : type(std::move(type_)), message(std::move(message_)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string type;  // "TypeError", "UndefinedError", "TemplateError" (raise_exception), ...
  std::string message;
};

// Concatenates pieces (GCC 12 misreports `"literal" + std::string(...)` under -Wrestrict).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

[[noreturn]] inline void fail(std::string type, std::string message);

// The most bytes one render may build in a single string or list (its max_output_bytes);
// set by the interpreter for the render running on this thread. Operations that could
// allocate without bound in one step (repetition, padding widths) check it first.
inline thread_local size_t max_build_bytes = SIZE_MAX;

inline void check_build(size_t bytes) {
  if (bytes > max_build_bytes) {
    fail("OutputLimit", "the template builds a value larger than the limit of " +
                            std::to_string(max_build_bytes) + " bytes");
  }
}

[[noreturn]] inline void fail(std::string type, std::string message) {
  throw Failure(std::move(type), std::move(message));
}
[[noreturn]] inline void type_error(std::string message) {
  throw Failure("TypeError", std::move(message));
}

}  // namespace heron::chat::jinja
