#pragma once
// GGUF header reader. Everything in the header is validated here, before MLX's
// load_gguf ever sees the file: magic, version, counts, string lengths, metadata
// types, tensor dims, types, offsets, alignment, overlap and file bounds.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::io {

// ggml tensor type ids (ggml.h numbering).
enum class GGMLType : uint32_t { F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 8, BF16 = 30 };

struct GGUFTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: dims[0] is the fastest-varying
  uint32_t type = 0;           // raw ggml type id
  uint64_t offset = 0;         // relative to the data section
  uint64_t nbytes = 0;
};

struct GGUFHeader {
  std::string path;
  uint32_t version = 0;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;  // absolute file offset of the tensor data section
  nlohmann::json metadata;   // key -> value; arrays become JSON arrays
  std::vector<GGUFTensorInfo> tensors;
};

// Throws heron::Error naming the file and the problem.
GGUFHeader read_gguf_header(const std::string& path);

}  // namespace heron::io
