#include "heron/io/gguf.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "heron/io/file_errors.h"
#include "heron/io/file_reader.h"

namespace heron::io {
namespace {

// GGUF metadata value types (gguf.md numbering).
enum ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

constexpr const char* kValueTypeNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                           "int32",  "float32", "bool",   "string", "array",
                                           "uint64", "int64",   "float64"};
constexpr uint32_t kNumValueTypes = 13;
constexpr int kMaxArrayDepth = 8;  // deeper nesting is never legitimate; bounds recursion
// Smallest possible encodings, used to reject counts the file cannot possibly hold.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;                  // key len, key, type, uint8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, 1 dim, type, offset

uint64_t min_value_bytes(uint32_t type) {
  switch (type) {
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kUint16:
    case kInt16:
      return 2;
    case kUint32:
    case kInt32:
    case kFloat32:
      return 4;
    case kUint64:
    case kInt64:
    case kFloat64:
    case kString:  // the length prefix
      return 8;
    default:  // kArray: element type + length
      return 12;
  }
}

class Parser {
 public:
  explicit Parser(FileReader& r) : r_(r) {}

  std::string read_string(const std::string& what) {
    uint64_t len = r_.read_le<uint64_t>(what.c_str());
    if (len > r_.remaining()) {
      r_.fail(what + ": string length " + std::to_string(len) + " at offset " +
              std::to_string(r_.pos() - 8) + " exceeds the " + std::to_string(r_.remaining()) +
              " bytes left in the file");
    }
    return r_.read_string(len, what.c_str());
  }

  uint32_t read_value_type(const std::string& key) {
    uint32_t type = r_.read_le<uint32_t>("a metadata value type");
    if (type >= kNumValueTypes) {
      r_.fail("metadata key " + in_quotes(key) + " has unknown value type " + std::to_string(type));
    }
    return type;
  }

  nlohmann::json read_value(uint32_t type, const std::string& key, int depth) {
    const std::string what = "metadata key " + in_quotes(key);
    switch (type) {
      case kUint8:
        return r_.read_le<uint8_t>(what.c_str());
      case kInt8:
        return r_.read_le<int8_t>(what.c_str());
      case kUint16:
        return r_.read_le<uint16_t>(what.c_str());
      case kInt16:
        return r_.read_le<int16_t>(what.c_str());
      case kUint32:
        return r_.read_le<uint32_t>(what.c_str());
      case kInt32:
        return r_.read_le<int32_t>(what.c_str());
      case kUint64:
        return r_.read_le<uint64_t>(what.c_str());
      case kInt64:
        return r_.read_le<int64_t>(what.c_str());
      case kFloat32:
        return static_cast<double>(r_.read_le<float>(what.c_str()));
      case kFloat64:
        return r_.read_le<double>(what.c_str());
      case kBool: {
        uint8_t b = r_.read_le<uint8_t>(what.c_str());
        if (b > 1) r_.fail(what + ": bool value " + std::to_string(b) + " is neither 0 nor 1");
        return b == 1;
      }
      case kString:
        return read_string(what);
      default:
        return read_array(key, depth);
    }
  }

  std::string type_name(uint32_t type, uint32_t elem_type) const {
    if (type != kArray) return kValueTypeNames[type];
    return std::string("array[") + kValueTypeNames[elem_type] + "]";
  }

  uint32_t last_elem_type() const { return last_elem_type_; }

 private:
  nlohmann::json read_array(const std::string& key, int depth) {
    const std::string what = "metadata key " + in_quotes(key);
    if (depth >= kMaxArrayDepth) {
      r_.fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    }
    uint32_t elem = r_.read_le<uint32_t>((what + " array element type").c_str());
    if (elem >= kNumValueTypes) {
      r_.fail(what + ": array has unknown element type " + std::to_string(elem));
    }
    uint64_t len = r_.read_le<uint64_t>((what + " array length").c_str());
    if (len > r_.remaining() / min_value_bytes(elem)) {
      r_.fail(what + ": array length " + std::to_string(len) + " of " + kValueTypeNames[elem] +
              " exceeds the " + std::to_string(r_.remaining()) + " bytes left in the file");
    }
    if (depth == 0) last_elem_type_ = elem;
    nlohmann::json arr = nlohmann::json::array();
    for (uint64_t i = 0; i < len; ++i) arr.push_back(read_value(elem, key, depth + 1));
    return arr;
  }

  FileReader& r_;
  uint32_t last_elem_type_ = 0;
};

void read_magic_and_version(FileReader& r, GGUFHeader& h) {
  char magic[4];
  r.read(magic, 4, "the GGUF magic");
  if (std::string(magic, 4) != "GGUF") {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%02x %02x %02x %02x", static_cast<unsigned char>(magic[0]),
                  static_cast<unsigned char>(magic[1]), static_cast<unsigned char>(magic[2]),
                  static_cast<unsigned char>(magic[3]));
    r.fail(std::string("not a GGUF file (bad magic bytes ") + hex + ", expected \"GGUF\")");
  }
  h.version = r.read_le<uint32_t>("the GGUF version");
  if (h.version == 2 || h.version == 3) return;
  uint32_t swapped = __builtin_bswap32(h.version);
  if (swapped == 2 || swapped == 3) r.fail("big-endian GGUF files are not supported");
  r.fail("unsupported GGUF version " + std::to_string(h.version) + " (only 2 and 3 are read)");
}

void read_metadata(FileReader& r, Parser& p, uint64_t kv_count, GGUFHeader& h) {
  h.metadata = nlohmann::json::object();
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key = p.read_string("metadata key #" + std::to_string(i));
    if (key.empty()) r.fail("metadata key #" + std::to_string(i) + " is empty");
    if (h.metadata.contains(key)) r.fail("duplicate metadata key " + in_quotes(key));
    uint32_t type = p.read_value_type(key);
    h.metadata[key] = p.read_value(type, key, 0);
    h.metadata_types[key] = p.type_name(type, p.last_elem_type());
  }
  if (!h.metadata.contains("general.alignment")) return;
  // The spec says uint32; MLX's loader only honours a uint32, so any other type would
  // make it compute different offsets from ours.
  if (h.metadata_types["general.alignment"] != "uint32") {
    r.fail("general.alignment has type " + h.metadata_types["general.alignment"] +
           " (must be uint32)");
  }
  h.alignment = h.metadata["general.alignment"].get<uint64_t>();
  if (h.alignment == 0 || (h.alignment & (h.alignment - 1)) != 0) {
    r.fail("general.alignment " + std::to_string(h.alignment) + " is not a nonzero power of two");
  }
}

GGUFTensorInfo read_tensor_info(FileReader& r, Parser& p, uint64_t index) {
  GGUFTensorInfo t;
  t.name = p.read_string("tensor #" + std::to_string(index) + " name");
  if (t.name.empty()) r.fail("tensor #" + std::to_string(index) + " has an empty name");
  const std::string what = "tensor " + in_quotes(t.name);
  uint32_t n_dims = r.read_le<uint32_t>((what + " dimension count").c_str());
  if (n_dims < 1 || n_dims > 4) {
    r.fail(what + " has " + std::to_string(n_dims) + " dimensions (must be 1 to 4)");
  }
  uint64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t dim = r.read_le<uint64_t>((what + " dimensions").c_str());
    if (dim == 0) r.fail(what + " dimension " + std::to_string(d) + " is 0");
    if (__builtin_mul_overflow(elements, dim, &elements)) {
      r.fail(what + " element count overflows 64 bits (dimension " + std::to_string(d) + " is " +
             std::to_string(dim) + ")");
    }
    t.dims.push_back(dim);
  }
  t.type = r.read_le<uint32_t>((what + " type").c_str());
  const GGMLTypeInfo* info = ggml_type_info(t.type);
  if (info == nullptr) r.fail(what + " has unknown tensor type " + std::to_string(t.type));
  if (t.dims[0] % info->block_size != 0) {
    r.fail(what + " first dimension " + std::to_string(t.dims[0]) + " is not a multiple of the " +
           info->name + " block size " + std::to_string(info->block_size));
  }
  if (__builtin_mul_overflow(elements / info->block_size, uint64_t{info->type_size}, &t.nbytes)) {
    r.fail(what + " byte size overflows 64 bits");
  }
  t.offset = r.read_le<uint64_t>((what + " offset").c_str());
  return t;
}

void check_tensor_placement(const FileReader& r, GGUFHeader& h) {
  const uint64_t data_size = h.file_size - h.data_offset;
  for (const auto& t : h.tensors) {
    if (t.offset % h.alignment != 0) {
      r.fail("tensor " + in_quotes(t.name) + " offset " + std::to_string(t.offset) +
             " is not a multiple of the alignment " + std::to_string(h.alignment));
    }
    if (t.offset > data_size || t.nbytes > data_size - t.offset) {
      r.fail("tensor " + in_quotes(t.name) + " data (offset " + std::to_string(t.offset) +
             " in the data section at " + std::to_string(h.data_offset) + ", " +
             std::to_string(t.nbytes) + " bytes) runs past the end of the file (size " +
             std::to_string(h.file_size) + ")");
    }
  }
  std::vector<const GGUFTensorInfo*> order;
  for (const auto& t : h.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& a = *order[i - 1];
    const auto& b = *order[i];
    if (a.offset + a.nbytes > b.offset) {
      r.fail("tensors " + in_quotes(a.name) + " (offset " + std::to_string(a.offset) + ", " +
             std::to_string(a.nbytes) + " bytes) and " + in_quotes(b.name) + " (offset " +
             std::to_string(b.offset) + ") overlap");
    }
  }
}

}  // namespace

GGUFHeader read_gguf_header(const std::string& path) {
  FileReader r(path);
  Parser p(r);
  GGUFHeader h;
  h.path = path;
  h.file_size = r.size();
  read_magic_and_version(r, h);

  uint64_t tensor_count = r.read_le<uint64_t>("the tensor count");
  uint64_t kv_count = r.read_le<uint64_t>("the metadata key count");
  if (tensor_count > r.remaining() / kMinTensorInfoBytes) {
    r.fail("tensor count " + std::to_string(tensor_count) + " is impossible for a file of " +
           std::to_string(r.size()) + " bytes");
  }
  if (kv_count > r.remaining() / kMinKvBytes) {
    r.fail("metadata key count " + std::to_string(kv_count) + " is impossible for a file of " +
           std::to_string(r.size()) + " bytes");
  }
  read_metadata(r, p, kv_count, h);

  std::unordered_set<std::string> names;
  h.tensors.reserve(tensor_count);  // bounded above by the file size
  for (uint64_t i = 0; i < tensor_count; ++i) {
    h.tensors.push_back(read_tensor_info(r, p, i));
    if (!names.insert(h.tensors.back().name).second) {
      r.fail("duplicate tensor name " + in_quotes(h.tensors.back().name));
    }
  }

  // The data section starts at the next multiple of the alignment.
  uint64_t pad = (h.alignment - r.pos() % h.alignment) % h.alignment;
  h.data_offset = r.pos() + pad;
  if (!h.tensors.empty() && h.data_offset > h.file_size) {
    r.fail("file is truncated: the tensor data section would start at offset " +
           std::to_string(h.data_offset) + " but the file ends at " + std::to_string(h.file_size));
  }
  if (h.data_offset > h.file_size) h.data_offset = h.file_size;  // no tensors: nothing to read
  check_tensor_placement(r, h);
  return h;
}

}  // namespace heron::io
