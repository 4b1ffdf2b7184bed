#pragma once
// The text a render writes: a std::string kept sized to its capacity, so an append is a
// capacity check and a copy (std::string::append keeps the length and terminator per
// call, and resize zero-fills each stretch before it is overwritten; here the string is
// filled once per growth). take() trims it to what was written and hands it over.
#include <algorithm>
#include <cstddef>
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
    char* at = end();
    if (limit() - at < static_cast<ptrdiff_t>(n)) at = grow_at(at, n);
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
  // A run of appends (see append_pieces) writes through its own pointer from end() up to
  // limit(), calls grow_at() when it needs n bytes more than that, and commit()s where it
  // got to; until then nothing it wrote counts.
  char* end() { return buf_.data() + size_; }
  const char* limit() const { return buf_.data() + buf_.size(); }
  // Room for n bytes from `at` (a pointer into this text); returns `at` in the new buffer.
  char* grow_at(const char* at, size_t n) {
    const size_t used = static_cast<size_t>(at - buf_.data());
    buf_.resize(std::max({used + n, 2 * buf_.size(), buf_.capacity()}));
    return buf_.data() + used;
  }
  void commit(const char* at) { size_ = static_cast<size_t>(at - buf_.data()); }
  // Drops what was written from byte `at` on (as std::string::erase(at) does).
  void erase(size_t at) { size_ = std::min(at, size_); }
  explicit operator std::string_view() const { return {buf_.data(), size_}; }
  std::string take() {
    buf_.resize(size_);
    size_ = 0;
    return std::move(buf_);
  }

 private:
  std::string buf_;
  size_t size_ = 0;
};

}  // namespace heron::chat::jinja
