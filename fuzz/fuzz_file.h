#pragma once
// The header readers take a path: fuzz inputs go to an in-memory file (memfd) whose
// /proc/self/fd path they open, so no run touches the disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace heron::fuzz {

class MemFile {
 public:
  MemFile() : fd_(memfd_create("heron-fuzz", 0)) {
    if (fd_ < 0) std::abort();
  }
  ~MemFile() { close(fd_); }
  // Replaces the contents with `data`; returns a path that opens them.
  std::string write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) {
      std::abort();
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

// Splits an input at its first NUL byte: (before, after). No NUL: (all, "").
inline std::pair<std::string, std::string> split_at_nul(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  const auto nul = s.find('\0');
  if (nul == std::string::npos) return {s, ""};
  return {s.substr(0, nul), s.substr(nul + 1)};
}

}  // namespace heron::fuzz
