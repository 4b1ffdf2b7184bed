#pragma once
// safetensors header reader and validator (runs before MLX reads the file).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::io {

struct SafetensorsTensorInfo {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I32", "U32", "I8", "U8", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // relative to the data section
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::string path;
  uint64_t data_offset = 0;  // 8 + header length
  nlohmann::json metadata;   // "__metadata__" or an empty object
  std::vector<SafetensorsTensorInfo> tensors;
};

// Throws heron::Error naming the file and the problem.
SafetensorsHeader read_safetensors_header(const std::string& path);

}  // namespace heron::io
