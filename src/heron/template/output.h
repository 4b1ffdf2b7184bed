#pragma once
// The text a render writes: a std::string kept sized to its capacity, so an append is a
// capacity check and a copy (std::string::append keeps the length and terminator per
// call, and resize zero-fills each stretch before it is overwritten; here the string is
// filled once per growth). take() trims it to what was written and hands it over.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

namespace heron::chat::jinja {

class Output {
 public:
  explicit Output(size_t reserve = 0) : buf_(reserve, '\0') {}
  size_t size() const { return size_; }
  // Room for n more bytes at the end, counted as written: the caller fills them.
  char* extend(size_t n) {
    if (buf_.size() - size_ < n) grow(n);
    char* at = buf_.data() + size_;
    size_ += n;
    return at;
  }
  void append(std::string_view s) {
    if (!s.empty()) std::memcpy(extend(s.size()), s.data(), s.size());
  }
  Output& operator+=(std::string_view s) {
    append(s);
    return *this;
  }
  // Drops what was written from byte `at` on (as std::string::erase(at) does).
  void erase(size_t at) { size_ = std::min(at, size_); }
  explicit operator std::string_view() const { return {buf_.data(), size_}; }
  std::string take() {
    buf_.resize(size_);
    size_ = 0;
    return std::move(buf_);
  }

 private:
  void grow(size_t n) { buf_.resize(std::max({size_ + n, 2 * buf_.size(), buf_.capacity()})); }
  std::string buf_;
  size_t size_ = 0;
};

}  // namespace heron::chat::jinja
