#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer::utf8 {

Decoded decode(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return {b0, 1, true, false};
  if (b0 < 0xC2 || b0 > 0xF4) return {kReplacement, 1, false, false};
  const uint32_t need = b0 < 0xE0 ? 1 : b0 < 0xF0 ? 2 : 3;
  // The second byte's range is narrower for a few leads: this rejects overlongs,
  // surrogates (ED A0..BF) and code points above U+10FFFF.
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 == 0xE0) lo = 0xA0;
  if (b0 == 0xED) hi = 0x9F;
  if (b0 == 0xF0) lo = 0x90;
  if (b0 == 0xF4) hi = 0x8F;
  char32_t cp = b0 & (0x3Fu >> need);
  for (uint32_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return {kReplacement, k, false, true};
    const auto b = static_cast<uint8_t>(s[i + k]);
    if (b < lo || b > hi) return {kReplacement, k, false, false};
    cp = (cp << 6) | (b & 0x3Fu);
    lo = 0x80;
    hi = 0xBF;
  }
  return {cp, need + 1, true, false};
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const Decoded d = decode(s, i);
    if (!d.valid) return false;
    i += d.len;
  }
  return true;
}

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t run = 0;  // start of the pending run of valid bytes, copied in one go
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const Decoded d = decode(s, i);
    if (!d.valid) {
      out.append(s.substr(run, i - run));
      append(out, kReplacement);
      run = i + d.len;
    }
    i += d.len;
  }
  out.append(s.substr(run));
  return out;
}

size_t complete_prefix(std::string_view s) {
  // A truncated sequence is at most 3 bytes long and starts at a lead byte.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const size_t i = n - back;
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) return n;
    if (b >= 0xC0) {
      const Decoded d = decode(s, i);
      return d.truncated ? i : n;
    }
  }
  return n;
}

}  // namespace heron::tokenizer::utf8
