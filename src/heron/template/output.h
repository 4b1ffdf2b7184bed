#pragma once
// The text a render writes: a growable buffer where an append is a capacity check and a
// copy (std::string keeps its length and terminator per append, and its resize zero-fills
// what is about to be overwritten). take() copies the text out once.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace heron::chat::jinja {

class Output {
 public:
  explicit Output(size_t reserve = 0) {
    if (reserve) grow(reserve);
  }
  size_t size() const { return size_; }
  // Room for n more bytes at the end, counted as written: the caller fills them.
  char* extend(size_t n) {
    if (capacity_ - size_ < n) grow(n);
    char* at = data_.get() + size_;
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
  explicit operator std::string_view() const { return {data_.get(), size_}; }
  std::string take() const { return std::string(data_.get(), size_); }

 private:
  void grow(size_t n) {
    const size_t capacity = std::max({size_ + n, 2 * capacity_, size_t{64}});
    auto data = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace heron::chat::jinja
