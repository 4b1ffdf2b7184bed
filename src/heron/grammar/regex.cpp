#include "heron/grammar/regex.h"

#include <string>

#include "heron/core/error.h"
#include "heron/grammar/code_points.h"

namespace heron::grammar {
namespace {

using Seq = GrammarBuilder::Seq;

constexpr int kMaxGroupDepth = 64;
constexpr size_t kMaxCount = 100000;

std::u32string decode_utf8(std::string_view s, std::string_view pattern) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size())
      throw Error("pattern '" + std::string(pattern) + "' is not valid UTF-8");
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

CodePointSet ascii_without(const CodePointSet& set) {
  CodePointSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : normalized(set)) {
    if (lo > 0x7F) break;
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= 0x7F) out.emplace_back(next, 0x7F);
  return out;
}

class Parser {
 public:
  Parser(GrammarBuilder& b, std::string_view pattern)
      : b_(b), pattern_(pattern), p_(decode_utf8(pattern, pattern)) {}

  uint32_t top() {
    const uint32_t any = b_.repeat(json_char_rule(b_, any_code_point()), 0, std::nullopt);
    std::vector<Seq> branches;
    while (true) {
      const bool start = eat('^');
      Seq seq;
      if (!start) seq.push_back(GrammarBuilder::ref(any));
      bool end = false;
      while (i_ < p_.size() && p_[i_] != '|') {
        if (eat('$')) {
          if (i_ < p_.size() && p_[i_] != '|') fail("'$' before the end of a branch");
          end = true;
          break;
        }
        seq.push_back(GrammarBuilder::ref(quantified()));
      }
      if (!end) seq.push_back(GrammarBuilder::ref(any));
      branches.push_back(std::move(seq));
      if (!eat('|')) break;
    }
    if (i_ != p_.size()) fail("unbalanced ')'");
    return b_.add(std::move(branches));
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("unsupported pattern '" + std::string(pattern_) + "': " + why);
  }
  bool eat(char32_t c) {
    if (i_ < p_.size() && p_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  uint32_t alternation() {
    std::vector<Seq> branches;
    do {
      Seq seq;
      while (i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')')
        seq.push_back(GrammarBuilder::ref(quantified()));
      branches.push_back(std::move(seq));
    } while (eat('|'));
    return b_.add(std::move(branches));
  }

  size_t number() {
    size_t n = 0;
    const size_t start = i_;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      n = n * 10 + (p_[i_++] - '0');
      if (n > kMaxCount)
        throw Error("schema too large: pattern count over " + std::to_string(kMaxCount) + " in '" +
                    std::string(pattern_) + "'");
    }
    if (i_ == start) fail("a count in {} is not a number");
    return n;
  }

  uint32_t quantified() {
    uint32_t a = atom();
    while (i_ < p_.size()) {
      size_t min = 0;
      std::optional<size_t> max;
      if (eat('*')) {
      } else if (eat('+')) {
        min = 1;
      } else if (eat('?')) {
        max = 1;
      } else if (p_[i_] == '{' && i_ + 1 < p_.size() && p_[i_ + 1] >= '0' && p_[i_ + 1] <= '9') {
        ++i_;
        min = number();
        if (eat(',')) {
          if (i_ < p_.size() && p_[i_] != '}') max = number();
        } else {
          max = min;
        }
        if (!eat('}')) fail("unterminated {n,m}");
        if (max && *max < min) fail("{n,m} with m < n");
      } else {
        break;
      }
      eat('?');  // lazy: the same language
      a = b_.repeat(a, min, max);
    }
    return a;
  }

  uint32_t atom() {
    if (i_ >= p_.size()) fail("missing atom");
    const char32_t c = p_[i_++];
    switch (c) {
      case '(': {
        if (++depth_ > kMaxGroupDepth) fail("groups nested too deeply");
        if (eat('?') && !eat(':')) fail("only (?:...) groups are supported");
        const uint32_t r = alternation();
        if (!eat(')')) fail("unbalanced '('");
        --depth_;
        return r;
      }
      case '[':
        return json_char_rule(b_, char_class());
      case '.':
        return json_char_rule(b_, complement({{'\n', '\n'}}));
      case '\\':
        return json_char_rule(b_, escape(nullptr));
      case '^':
      case '$':
        fail("anchors are supported only at the ends of a top-level branch");
      case '*':
      case '+':
      case '?':
        fail("nothing to repeat");
      case ')':
        fail("unbalanced ')'");
    }
    return json_char_rule(b_, {{c, c}});
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      if (i_ >= p_.size()) fail("truncated hex escape");
      const char32_t h = p_[i_++];
      const int d = h >= '0' && h <= '9'   ? static_cast<int>(h - '0')
                    : h >= 'a' && h <= 'f' ? static_cast<int>(h - 'a' + 10)
                    : h >= 'A' && h <= 'F' ? static_cast<int>(h - 'A' + 10)
                                           : -1;
      if (d < 0) fail("bad hex escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // After a '\'. `wide`: set when a class escape (\d \w \s or negation) was read, whose
  // negation in a [^...] must stay within ASCII (see regex.h).
  CodePointSet escape(bool* wide) {
    if (i_ >= p_.size()) fail("trailing '\\'");
    const char32_t c = p_[i_++];
    const CodePointSet digit{{'0', '9'}};
    const CodePointSet word{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    const CodePointSet space{{'\t', '\r'}, {' ', ' '}};
    if (wide && (c == 'd' || c == 'w' || c == 's' || c == 'D' || c == 'W' || c == 'S'))
      *wide = true;
    switch (c) {
      case 'd':
        return digit;
      case 'w':
        return word;
      case 's':
        return space;
      case 'D':
        return ascii_without(digit);
      case 'W':
        return ascii_without(word);
      case 'S':
        return {{0x21, 0x7E}};
      case 'n':
        return {{'\n', '\n'}};
      case 't':
        return {{'\t', '\t'}};
      case 'r':
        return {{'\r', '\r'}};
      case 'f':
        return {{'\f', '\f'}};
      case 'v':
        return {{'\v', '\v'}};
      case 'x': {
        const uint32_t v = hex(2);
        return {{v, v}};
      }
      case 'u': {
        const uint32_t v = hex(4);
        return {{v, v}};
      }
    }
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      fail(std::string("escape \\") + static_cast<char>(c));
    return {{c, c}};
  }

  // After '['.
  CodePointSet char_class() {
    const bool negated = eat('^');
    bool wide = false;
    CodePointSet set;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) fail("unterminated '['");
      if (p_[i_] == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      CodePointSet item;
      if (eat('\\')) {
        item = escape(&wide);
      } else {
        item = {{p_[i_], p_[i_]}};
        ++i_;
      }
      if (item.size() == 1 && item[0].first == item[0].second && i_ + 1 < p_.size() &&
          p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        uint32_t hi;
        if (eat('\\')) {
          const CodePointSet e = escape(&wide);
          if (e.size() != 1 || e[0].first != e[0].second) fail("class range ends in a class");
          hi = e[0].first;
        } else {
          hi = p_[i_++];
        }
        if (hi < item[0].first) fail("class range out of order");
        item[0].second = hi;
      }
      set.insert(set.end(), item.begin(), item.end());
    }
    if (!negated) return normalized(std::move(set));
    return wide ? ascii_without(set) : complement(set);
  }

  GrammarBuilder& b_;
  std::string_view pattern_;
  std::u32string p_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

uint32_t compile_pattern(GrammarBuilder& b, std::string_view pattern) {
  return Parser(b, pattern).top();
}

}  // namespace heron::grammar
