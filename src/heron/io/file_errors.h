#pragma once
// Small helpers shared by the model-file readers so their messages read alike.
#include <climits>
#include <cstdint>
#include <string>

#include "heron/core/error.h"

namespace heron::io {

inline std::string in_quotes(const std::string& s) {
  return "'" + s + "'";
}

// "PATH: MESSAGE" as a heron::Error.
[[noreturn]] inline void fail_file(const std::string& path, const std::string& message) {
  throw Error(path + ": " + message);
}

// MLX shapes are int32; a larger dimension would silently wrap.
inline void check_mlx_dim(const std::string& path, const std::string& tensor, uint64_t dim) {
  if (dim > static_cast<uint64_t>(INT32_MAX)) {
    fail_file(path, "tensor " + in_quotes(tensor) + " dimension " + std::to_string(dim) +
                        " is too large for MLX (limit " + std::to_string(INT32_MAX) + ")");
  }
}

}  // namespace heron::io
