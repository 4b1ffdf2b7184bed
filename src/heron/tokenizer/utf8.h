#pragma once
// UTF-8 helpers shared by the tokenizer pipeline and the streaming detokenizer.
// Invalid input follows one rule everywhere: each maximal invalid subpart (Unicode
// "substitution of maximal subparts", as Python's errors="replace" and Rust's
// String::from_utf8_lossy do) becomes one U+FFFD.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace heron::tokenizer::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

struct Decoded {
  char32_t cp;     // the code point, or U+FFFD when invalid
  uint32_t len;    // bytes consumed (>= 1)
  bool valid;      // false: s[i, i+len) is one maximal invalid subpart
  bool truncated;  // invalid only because the text ended mid-sequence
};

// Decodes the sequence starting at s[i] (i < s.size()).
Decoded decode(std::string_view s, size_t i);

void append(std::string& out, char32_t cp);

bool is_valid(std::string_view s);

// Copy of s with every maximal invalid subpart replaced by U+FFFD.
std::string sanitize(std::string_view s);

// Length of the longest prefix of s that does not end inside a truncated (but so far
// valid) sequence: what can be emitted now without splitting a code point.
size_t complete_prefix(std::string_view s);

}  // namespace heron::tokenizer::utf8
