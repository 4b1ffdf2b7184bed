#include "heron/io/file_reader.h"

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "heron/io/file_errors.h"

namespace heron::io {

FileReader::FileReader(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("cannot open: is a directory");
  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) fail(std::string("cannot open: ") + std::strerror(errno));
  // Headers are read in many small pieces; a larger buffer keeps that cheap.
  std::setvbuf(file_.get(), nullptr, _IOFBF, 1 << 20);
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot read the file size: " + ec.message());
  size_ = size;
}

void FileReader::require(uint64_t n, const char* what) const {
  if (n > remaining()) {
    fail("file is truncated: reading " + std::string(what) + " needs " + std::to_string(n) +
         " bytes at offset " + std::to_string(pos_) + " but the file ends at " +
         std::to_string(size_));
  }
}

void FileReader::read(void* dst, uint64_t n, const char* what) {
  require(n, what);
  if (n == 0) return;
  // The file may still shrink under us; a short read is then an error, never garbage.
  if (std::fread(dst, 1, n, file_.get()) != n) {
    fail("read error at offset " + std::to_string(pos_) + " while reading " + what);
  }
  pos_ += n;
}

std::string FileReader::read_string(uint64_t n, const char* what) {
  require(n, what);  // before allocating n bytes
  std::string s(n, '\0');
  read(s.data(), n, what);
  return s;
}

void FileReader::seek(uint64_t pos) {
  if (pos > size_) fail("seek to offset " + std::to_string(pos) + " past the end of the file");
  if (fseeko(file_.get(), static_cast<off_t>(pos), SEEK_SET) != 0) {
    fail("cannot seek to offset " + std::to_string(pos));
  }
  pos_ = pos;
}

void FileReader::fail(const std::string& message) const {
  throw Error(path_ + ": " + message);
}

}  // namespace heron::io
