#include "heron/template/pystr.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace heron::chat::jinja::py {

bool is_ascii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if ((c >> 5) == 6) {
      cp = c & 0x1F, n = 2;
    } else if ((c >> 4) == 14) {
      cp = c & 0x0F, n = 3;
    } else {
      cp = c & 0x07, n = 4;
    }
    for (size_t k = 1; k < n && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

bool isspace(char32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isprintable(char32_t c) {
  if (c < 0x80) return c >= 0x20 && c < 0x7F;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_SURROGATE:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_SPACE_SEPARATOR:
      return false;
    default:
      return true;
  }
}

std::string repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back(quote);
  static const char* hex = "0123456789abcdef";
  auto escape = [&](char32_t c, int digits, char tag) {
    out.push_back('\\');
    out.push_back(tag);
    for (int k = digits - 1; k >= 0; --k) out.push_back(hex[(c >> (4 * k)) & 0xF]);
  };
  for (char32_t c : decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      escape(c, 2, 'x');
    } else if (c < 0x7F || isprintable(c)) {
      append_utf8(out, c);
    } else if (c <= 0xFF) {
      escape(c, 2, 'x');
    } else if (c <= 0xFFFF) {
      escape(c, 4, 'u');
    } else {
      escape(c, 8, 'U');
    }
  }
  out.push_back(quote);
  return out;
}

std::string integral_digits(double d) {
  char buf[400];  // DBL_MAX has 309 digits
  const int n = std::snprintf(buf, sizeof buf, "%.0f", std::fabs(d));
  return std::string(buf, static_cast<size_t>(std::max(n, 0)));
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp10 = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exp10);
  const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  const int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= ndigits) {
      out += digits;
      out.append(static_cast<size_t>(decpt - ndigits), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<size_t>(decpt));
      out.push_back('.');
      out.append(digits, static_cast<size_t>(decpt));
    }
    return out;
  }
  out.push_back(digits[0]);
  if (ndigits > 1) {
    out.push_back('.');
    out.append(digits, 1);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  out += ebuf;
  return out;
}

namespace {

std::string icu_map(std::string_view s, bool to_upper) {
  auto u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  if (to_upper) {
    u.toUpper(icu::Locale::getRoot());
  } else {
    u.toLower(icu::Locale::getRoot());
  }
  std::string out;
  u.toUTF8String(out);
  return out;
}

std::string map_one(char32_t c, bool to_upper) {
  std::string s;
  append_utf8(s, c);
  return icu_map(s, to_upper);
}

bool cased(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_CASED);
}
bool is_lower_cp(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_LOWERCASE);
}
bool is_upper_cp(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_UPPERCASE);
}

// Full titlecase mapping of one code point ("ß" -> "Ss"), as str.title()/capitalize() do.
std::string to_title_cp(char32_t c) {
  if (c < 0x80) return std::string(1, static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
  icu::UnicodeString u(static_cast<UChar32>(c));
  u.toTitle(nullptr, icu::Locale::getRoot(),
            U_TITLECASE_NO_LOWERCASE | U_TITLECASE_NO_BREAK_ADJUSTMENT);
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace

std::string upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    }
    return out;
  }
  return icu_map(s, true);
}

std::string lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return out;
  }
  return icu_map(s, false);
}

std::string swapcase(std::string_view s) {
  std::string out;
  for (char32_t c : decode(s)) {
    if (is_upper_cp(c)) {
      out += map_one(c, false);
    } else if (is_lower_cp(c)) {
      out += map_one(c, true);
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool previous_cased = false;
  for (char32_t c : decode(s)) {
    if (previous_cased) {
      out += c < 0x80 ? lower(std::string(1, static_cast<char>(c))) : map_one(c, false);
    } else {
      out += to_title_cp(c);
    }
    previous_cased = c < 0x80 ? ((c | 32) >= 'a' && (c | 32) <= 'z') : cased(c);
  }
  return out;
}

std::string capitalize(std::string_view s) {
  auto cps = decode(s);
  if (cps.empty()) return "";
  std::string out = to_title_cp(cps[0]);
  out += lower(encode(std::u32string_view(cps).substr(1)));
  return out;
}

bool islower(std::string_view s) {
  bool any = false;
  for (char32_t c : decode(s)) {
    if (is_upper_cp(c) || u_istitle(static_cast<UChar32>(c))) return false;
    any = any || is_lower_cp(c);
  }
  return any;
}

bool isupper(std::string_view s) {
  bool any = false;
  for (char32_t c : decode(s)) {
    if (is_lower_cp(c) || u_istitle(static_cast<UChar32>(c))) return false;
    any = any || is_upper_cp(c);
  }
  return any;
}

bool isalpha(std::string_view s) {
  if (s.empty()) return false;
  for (char32_t c : decode(s)) {
    if (!u_isalpha(static_cast<UChar32>(c))) return false;
  }
  return true;
}

bool isdigit(std::string_view s) {
  if (s.empty()) return false;
  for (char32_t c : decode(s)) {
    auto type = u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE);
    if (type != U_NT_DECIMAL && type != U_NT_DIGIT) return false;
  }
  return true;
}

bool isalnum(std::string_view s) {
  if (s.empty()) return false;
  for (char32_t c : decode(s)) {
    auto type = u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE);
    if (!u_isalpha(static_cast<UChar32>(c)) && type == U_NT_NONE) return false;
  }
  return true;
}

bool isspace(std::string_view s) {
  if (s.empty()) return false;
  for (char32_t c : decode(s)) {
    if (!isspace(c)) return false;
  }
  return true;
}

namespace {

// The code point whose UTF-8 encoding is s[begin, end).
char32_t code_point(std::string_view s, size_t begin, size_t end) {
  if (end - begin == 1) return static_cast<unsigned char>(s[begin]);
  return decode(s.substr(begin, end - begin))[0];
}

size_t next_cp(std::string_view s, size_t i) {
  ++i;
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  return i;
}

size_t prev_cp(std::string_view s, size_t i) {
  --i;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

std::string_view strip_view(std::string_view s, const std::optional<std::string>& chars,
                            Side side) {
  std::u32string set;
  if (chars) set = decode(*chars);
  auto strippable = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : isspace(c);
  };
  size_t begin = 0, end = s.size();
  if (side != Side::Right) {
    while (begin < end) {
      const size_t next = next_cp(s, begin);
      if (!strippable(code_point(s, begin, next))) break;
      begin = next;
    }
  }
  if (side != Side::Left) {
    while (end > begin) {
      const size_t prev = prev_cp(s, end);
      if (!strippable(code_point(s, prev, end))) break;
      end = prev;
    }
  }
  return s.substr(begin, end - begin);
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, Side side) {
  return std::string(strip_view(s, chars, side));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      size_t at = s.find(*sep, pos);
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, at - pos));
      pos = at + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  auto cps = decode(s);
  size_t i = 0;
  const size_t n = cps.size();
  while (i < n) {
    while (i < n && isspace(cps[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) == maxsplit) {
      size_t end = n;
      while (end > i && isspace(cps[end - 1])) --end;
      out.push_back(encode(std::u32string_view(cps).substr(i, end - i)));
      break;
    }
    size_t j = i;
    while (j < n && !isspace(cps[j])) ++j;
    out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t at = s.rfind(*sep, end - sep->size());
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    out.emplace_back(s.substr(0, end));
  } else {
    auto cps = decode(s);
    size_t j = cps.size();
    while (j > 0) {
      while (j > 0 && isspace(cps[j - 1])) --j;
      if (j == 0) break;
      if (maxsplit >= 0 && static_cast<long>(out.size()) == maxsplit) {
        size_t begin = 0;
        while (begin < j && isspace(cps[begin])) ++begin;
        out.push_back(encode(std::u32string_view(cps).substr(begin, j - begin)));
        break;
      }
      size_t i = j;
      while (i > 0 && !isspace(cps[i - 1])) --i;
      out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
      j = i;
    }
  }
  return {out.rbegin(), out.rend()};
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  auto cps = decode(s);
  size_t start = 0, i = 0;
  auto is_break = [](char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
           c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
  };
  while (i < cps.size()) {
    if (is_break(cps[i])) {
      size_t eol = i + 1;
      if (cps[i] == '\r' && eol < cps.size() && cps[eol] == '\n') ++eol;
      out.push_back(encode(std::u32string_view(cps).substr(start, (keepends ? eol : i) - start)));
      start = i = eol;
    } else {
      ++i;
    }
  }
  if (start < cps.size()) out.push_back(encode(std::u32string_view(cps).substr(start)));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, long count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `repl` before every code point and at the end.
    long done = 0;
    auto cps = decode(s);
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count < 0 || done < count) out += repl;
    return out;
  }
  size_t pos = 0;
  long done = 0;
  while (count < 0 || done < count) {
    size_t at = s.find(old, pos);
    if (at == std::string_view::npos) break;
    out.append(s.substr(pos, at - pos));
    out.append(repl);
    pos = at + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

long find(std::string_view s, std::string_view sub, bool reverse) {
  size_t at = reverse ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos) return -1;
  return static_cast<long>(length(s.substr(0, at)));
}

size_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return length(s) + 1;
  size_t n = 0;
  for (size_t at = s.find(sub); at != std::string_view::npos; at = s.find(sub, at + sub.size())) {
    ++n;
  }
  return n;
}

std::string center(std::string_view s, long width, std::string_view fill) {
  const long len = static_cast<long>(length(s));
  if (width <= len) return std::string(s);
  const long marg = width - len;
  // CPython: left = marg / 2 + (marg & width & 1)
  const long left = marg / 2 + (marg & width & 1);
  std::string out;
  for (long k = 0; k < left; ++k) out += fill;
  out += s;
  for (long k = 0; k < marg - left; ++k) out += fill;
  return out;
}

std::string ljust(std::string_view s, long width, std::string_view fill) {
  std::string out(s);
  for (long k = static_cast<long>(length(s)); k < width; ++k) out += fill;
  return out;
}

std::string rjust(std::string_view s, long width, std::string_view fill) {
  std::string out;
  for (long k = static_cast<long>(length(s)); k < width; ++k) out += fill;
  out += s;
  return out;
}

std::string zfill(std::string_view s, long width) {
  const long len = static_cast<long>(length(s));
  if (width <= len) return std::string(s);
  std::string out;
  size_t body = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    out.push_back(s[0]);
    body = 1;
  }
  out.append(static_cast<size_t>(width - len), '0');
  out.append(s.substr(body));
  return out;
}

}  // namespace heron::chat::jinja::py
