#pragma once
// Bounds-checked sequential reader for untrusted model files. Every read is checked
// against the file size first, so a corrupt header can never make us read past the
// end or allocate more than the file holds. Values are little-endian.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace heron::io {

static_assert(std::endian::native == std::endian::little,
              "model file readers assume a little-endian host");

class FileReader {
 public:
  // Throws heron::Error "PATH: cannot open: REASON".
  explicit FileReader(const std::string& path);

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  // Throws heron::Error naming `what` when fewer than n bytes remain.
  void require(uint64_t n, const char* what) const;
  void read(void* dst, uint64_t n, const char* what);
  std::string read_string(uint64_t n, const char* what);
  void seek(uint64_t pos);

  template <class T>
  T read_le(const char* what) {
    T v;
    read(&v, sizeof(T), what);
    return v;
  }

  // "PATH: MESSAGE" as a heron::Error.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
};

}  // namespace heron::io
