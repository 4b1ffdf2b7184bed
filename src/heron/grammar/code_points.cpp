#include "heron/grammar/code_points.h"

#include <algorithm>
#include <string>

namespace heron::grammar {
namespace {

using Seq = GrammarBuilder::Seq;

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// [lo, hi] of one UTF-8 length as sequences of byte ranges (the split regex engines use:
// cut where a continuation byte would not span its full 80..BF range).
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<Seq>& out) {
  for (int i = 1; i < 4; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8_sequences(lo, lo | m, out);
        utf8_sequences((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8_sequences(lo, (hi & ~m) - 1, out);
        utf8_sequences(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = utf8(lo), z = utf8(hi);
  Seq seq;
  for (size_t k = 0; k < a.size(); ++k)
    seq.push_back(GrammarBuilder::bytes(static_cast<uint8_t>(a[k]), static_cast<uint8_t>(z[k])));
  out.push_back(std::move(seq));
}

void utf8_ranges(uint32_t lo, uint32_t hi, std::vector<Seq>& out) {
  for (uint32_t cut : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= cut && hi > cut) {
      utf8_sequences(lo, cut, out);
      lo = cut + 1;
    }
  }
  utf8_sequences(lo, hi, out);
}

std::string escape(uint32_t cp) {
  switch (cp) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
  }
  static const char* hex = "0123456789abcdef";
  return std::string("\\u00") + hex[cp >> 4] + hex[cp & 15];
}

}  // namespace

CodePointSet normalized(CodePointSet set) {
  std::sort(set.begin(), set.end());
  CodePointSet out;
  for (auto [lo, hi] : set) {
    if (lo > hi) continue;
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  return out;
}

CodePointSet complement(const CodePointSet& set) {
  CodePointSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : normalized(set)) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return normalized([&] {
    // Surrogates are not scalar values: never emitted.
    CodePointSet cut;
    for (auto [lo, hi] : out) {
      if (hi < 0xD800 || lo > 0xDFFF) {
        cut.emplace_back(lo, hi);
        continue;
      }
      if (lo < 0xD800) cut.emplace_back(lo, 0xD7FF);
      if (hi > 0xDFFF) cut.emplace_back(0xE000, hi);
    }
    return cut;
  }());
}

CodePointSet any_code_point() {
  return complement({});
}

uint32_t json_char_rule(GrammarBuilder& b, const CodePointSet& set, bool other_escapes) {
  std::vector<Seq> alts, escapes;  // escapes: what follows the '\'
  auto escaped = [&](uint32_t cp) {
    escapes.push_back(GrammarBuilder::literal(escape(cp).substr(1)));
  };
  for (auto [lo, hi] : complement(complement(set))) {
    // Code points that JSON must escape: controls, '"' and '\'.
    uint32_t cp = lo;
    for (; cp <= hi && (cp < 0x20 || cp == '"' || cp == '\\'); ++cp) escaped(cp);
    while (cp <= hi) {
      uint32_t end = hi;
      if (cp < '"' && end >= '"') end = '"' - 1;
      if (cp < '\\' && end >= '\\') end = '\\' - 1;
      utf8_ranges(cp, end, alts);
      cp = end + 1;
      if (cp <= hi && (cp == '"' || cp == '\\')) escaped(cp++);
    }
  }
  if (other_escapes) {
    // \/ and \uXXXX except surrogates (d800-dfff), so that the text always decodes.
    const uint32_t hex = b.add({{GrammarBuilder::bytes('0', '9')},
                                {GrammarBuilder::bytes('a', 'f')},
                                {GrammarBuilder::bytes('A', 'F')}});
    const uint32_t hex2 = b.repeat(hex, 2, 2), hex3 = b.repeat(hex, 3, 3);
    escapes.push_back(GrammarBuilder::literal("/"));
    for (auto [lo, hi] : {std::pair{'0', '9'}, {'a', 'c'}, {'A', 'C'}, {'e', 'f'}, {'E', 'F'}})
      escapes.push_back({GrammarBuilder::bytes('u', 'u'),
                         GrammarBuilder::bytes(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)),
                         GrammarBuilder::ref(hex3)});
    for (char d : {'d', 'D'})
      escapes.push_back({GrammarBuilder::bytes('u', 'u'),
                         GrammarBuilder::bytes(static_cast<uint8_t>(d), static_cast<uint8_t>(d)),
                         GrammarBuilder::bytes('0', '7'), GrammarBuilder::ref(hex2)});
  }
  // One alternative for all escapes: a state inside a string then holds one stack for '\'
  // instead of one per escape.
  if (!escapes.empty())
    alts.push_back(
        {GrammarBuilder::bytes('\\', '\\'), GrammarBuilder::ref(b.add(std::move(escapes)))});
  return b.add(std::move(alts));
}

}  // namespace heron::grammar
