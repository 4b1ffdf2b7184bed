#pragma once
// GGUF header reader. Everything in the header is validated here, before any tensor
// data is read: magic, version, counts, string lengths, metadata types, tensor dims,
// types, block counts, offsets, alignment, overlap and file bounds.
//
// Accepted: GGUF v2 and v3, little-endian. Any ggml type with a known block layout
// passes the header (so errors can name it); load_gguf_tensors refuses the types
// ggml_type_loadable does not list.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/io/ggml_types.h"

namespace heron::io {

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
  uint64_t file_size = 0;
  // key -> value; arrays become JSON arrays, uint64/int64 stay exact. Strings keep
  // their raw bytes even when they are not valid UTF-8: nlohmann stores them fine,
  // but json::dump() throws on them unless given error_handler_t::replace.
  nlohmann::json metadata;
  // key -> GGUF value type: "uint8" .. "float64", "bool", "string", "array[ELEM]"
  // ("array[array]" for arrays of arrays, whatever the inner types).
  std::map<std::string, std::string> metadata_types;
  std::vector<GGUFTensorInfo> tensors;  // file order
};

// Throws heron::Error naming the file and the problem.
GGUFHeader read_gguf_header(const std::string& path);

}  // namespace heron::io
