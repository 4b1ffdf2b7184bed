#include "heron/tokenizer/byte_level.h"

#include <array>

#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer::byte_level {
namespace {

struct Tables {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 324> to_byte{};    // code points 0..323 cover the alphabet
  std::array<std::string, 256> spelled;  // UTF-8 of to_char, for fast spell()
};

Tables build() {
  Tables t;
  t.to_byte.fill(-1);
  auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  int next = 256;  // non-printable bytes get code points 256, 257, ... in byte order
  for (int b = 0; b < 256; ++b) {
    const char32_t c = printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
    t.to_char[b] = c;
    t.to_byte[c] = static_cast<int16_t>(b);
    utf8::append(t.spelled[b], c);
  }
  return t;
}

const Tables& tables() {
  static const Tables t = build();
  return t;
}

}  // namespace

char32_t byte_to_char(uint8_t b) {
  return tables().to_char[b];
}

std::string spell(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += t.spelled[static_cast<uint8_t>(c)];
  return out;
}

std::optional<std::string> unspell(std::string_view spelled) {
  const Tables& t = tables();
  std::string out;
  out.reserve(spelled.size());
  for (size_t i = 0; i < spelled.size();) {
    const utf8::Decoded d = utf8::decode(spelled, i);
    if (!d.valid || d.cp >= t.to_byte.size() || t.to_byte[d.cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(t.to_byte[d.cp]));
    i += d.len;
  }
  return out;
}

}  // namespace heron::tokenizer::byte_level
