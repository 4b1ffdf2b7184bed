#pragma once
// Test helpers that write GGUF and safetensors files byte by byte, so tests can build
// both valid files and every kind of corrupt one.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "heron/core/error.h"
#include "heron/io/ggml_types.h"

namespace heron::test {

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("heron_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline void write_file(const std::string& path, const std::string& text) {
  write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// Little-endian byte sink.
struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  Bytes& put(T v) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.insert(b.end(), raw, raw + sizeof(T));
    return *this;
  }
  Bytes& u8(uint8_t v) { return put(v); }
  Bytes& u16(uint16_t v) { return put(v); }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& raw(const std::vector<uint8_t>& v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
};

// GGUF metadata value type ids.
enum GgufValue : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kStr = 8,
  kArr = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Bytes a well-formed tensor of this type and shape occupies.
inline uint64_t ggml_nbytes(uint32_t type, const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  const auto* info = io::ggml_type_info(type);
  return n / info->block_size * info->type_size;
}

// Deterministic non-zero filler bytes.
inline std::vector<uint8_t> filler(uint64_t n, uint8_t seed = 1) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

struct GgufTensorSpec {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type = 0;
  std::vector<uint8_t> data;       // written at the tensor's offset
  std::optional<uint64_t> offset;  // default: next aligned free position
};

// Builds a GGUF file; every field can be overridden to produce a corrupt one.
struct GgufBuilder {
  std::string magic = "GGUF";
  uint32_t version = 3;
  std::optional<uint64_t> tensor_count, kv_count;  // override the real counts
  uint64_t alignment = 32;                         // layout only; add general.alignment yourself
  std::vector<Bytes> kvs;
  std::vector<GgufTensorSpec> tensors;

  GgufBuilder& kv(const std::string& key, uint32_t type, const Bytes& value) {
    Bytes e;
    e.str(key).u32(type).raw(value.b);
    kvs.push_back(e);
    return *this;
  }
  GgufBuilder& kv_u32(const std::string& key, uint32_t v) { return kv(key, kU32, Bytes().u32(v)); }
  GgufBuilder& kv_str(const std::string& key, const std::string& v) {
    return kv(key, kStr, Bytes().str(v));
  }
  // A tensor with well-formed filler data.
  GgufBuilder& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type) {
    auto data = filler(ggml_nbytes(type, dims), static_cast<uint8_t>(tensors.size() + 1));
    tensors.push_back({name, std::move(dims), type, std::move(data), std::nullopt});
    return *this;
  }

  std::vector<uint8_t> build() const {
    Bytes out;
    out.b.insert(out.b.end(), magic.begin(), magic.end());
    out.u32(version);
    out.u64(tensor_count.value_or(tensors.size()));
    out.u64(kv_count.value_or(kvs.size()));
    for (const auto& e : kvs) out.raw(e.b);
    std::vector<uint64_t> offsets;
    uint64_t cursor = 0;
    for (const auto& t : tensors) {
      uint64_t off = t.offset.value_or((cursor + alignment - 1) / alignment * alignment);
      offsets.push_back(off);
      if (!t.offset) cursor = off + t.data.size();
      out.str(t.name).u32(static_cast<uint32_t>(t.dims.size()));
      for (auto d : t.dims) out.u64(d);
      out.u32(t.type).u64(off);
    }
    while (out.b.size() % alignment != 0) out.u8(0);
    const uint64_t data_start = out.b.size();
    for (size_t i = 0; i < tensors.size(); ++i) {
      const auto& d = tensors[i].data;
      if (d.empty()) continue;
      uint64_t end = data_start + offsets[i] + d.size();
      if (out.b.size() < end) out.b.resize(end, 0);
      std::copy(d.begin(), d.end(),
                out.b.begin() + static_cast<std::ptrdiff_t>(data_start + offsets[i]));
    }
    return out.b;
  }
};

// Safetensors writer: JSON header text as given, then the data bytes.
inline std::vector<uint8_t> safetensors_bytes(const std::string& header,
                                              const std::vector<uint8_t>& data) {
  Bytes out;
  out.u64(header.size());
  out.b.insert(out.b.end(), header.begin(), header.end());
  out.raw(data);
  return out.b;
}

// The message of the heron::Error that f throws; fails the test if it throws nothing
// or something else.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const heron::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected heron::Error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected heron::Error, nothing was thrown";
  return {};
}

// Substring check with the full message on failure; evaluates each argument once.
inline ::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected to find \"" << needle << "\" in \"" << haystack << "\"";
}
}  // namespace heron::test
#define EXPECT_CONTAINS(haystack, needle) EXPECT_TRUE(::heron::test::contains((haystack), (needle)))
