#pragma once
// String equality for the short strings templates compare most (dict keys such as "role",
// role names such as "assistant"): 4 to 16 bytes compare as two overlapping words,
// cheaper than a memcmp call or a byte loop.
#include <cstdint>
#include <cstring>
#include <string_view>

namespace heron::chat::jinja {

namespace detail {
template <class Word>
inline bool same_ends(const char* a, const char* b, size_t n) {
  Word a0, a1, b0, b1;
  std::memcpy(&a0, a, sizeof(Word));
  std::memcpy(&b0, b, sizeof(Word));
  std::memcpy(&a1, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b1, b + n - sizeof(Word), sizeof(Word));
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}
}  // namespace detail

inline bool same_text(std::string_view a, std::string_view b) {
  const size_t n = b.size();
  if (a.size() != n) return false;
  if (n >= 8 && n <= 16) return detail::same_ends<uint64_t>(a.data(), b.data(), n);
  if (n >= 4 && n < 8) return detail::same_ends<uint32_t>(a.data(), b.data(), n);
  return a.compare(b) == 0;
}

}  // namespace heron::chat::jinja
