#include "heron/template/lexer.h"

#include <cerrno>
#include <cmath>
#include <string_view>

#include "heron/core/error.h"
#include "heron/template/failure.h"
#include "heron/template/pystr.h"

namespace heron::chat::jinja {

void syntax_error(int line, int col, const std::string& message) {
  throw Error("chat template syntax error at line " + std::to_string(line) + ", column " +
              std::to_string(col) + ": " + message);
}

namespace {

// Newlines become "\n" and one trailing newline goes (keep_trailing_newline=False).
std::string normalize_newlines(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Python's str.isspace() on the code point starting at s[i]; sets len to its byte length.
bool space_at(std::string_view s, size_t i, size_t& len) {
  auto c = static_cast<unsigned char>(s[i]);
  len = 1;
  if (c < 0x80) return py::isspace(static_cast<char32_t>(c));
  if (c == 0xC2 && i + 1 < s.size()) {  // U+0085, U+00A0
    len = 2;
    auto d = static_cast<unsigned char>(s[i + 1]);
    return d == 0x85 || d == 0xA0;
  }
  if ((c == 0xE1 || c == 0xE2 || c == 0xE3) && i + 2 < s.size()) {
    len = 3;
    auto cp = py::decode(s.substr(i, 3));
    return cp.size() == 1 && py::isspace(cp[0]);
  }
  while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
  return false;
}

size_t skip_space(std::string_view s, size_t i) {
  size_t len;
  while (i < s.size() && space_at(s, i, len)) i += len;
  return i;
}

// Length of the trailing whitespace run of `text` (Python rstrip).
size_t rstrip_len(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    size_t len;
    if (!space_at(text, start, len) || start + len != end) break;
    end = start;
  }
  return text.size() - end;
}

bool all_space(std::string_view s) {
  if (s.empty()) return false;
  return skip_space(s, 0) == s.size();
}

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(normalize_newlines(source)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_root();
    push(Tok::Eof, "", pos_);
    return std::move(tokens_);
  }

 private:
  std::string src_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
  std::vector<char> balance_;
  // Line/column bookkeeping: positions only grow, so count incrementally.
  size_t counted_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;

  void locate(size_t at, int& line, int& col) {
    for (; counted_ < at && counted_ < src_.size(); ++counted_) {
      if (src_[counted_] == '\n') {
        ++line_;
        line_start_ = counted_ + 1;
      }
    }
    line = line_;
    col = 1 + static_cast<int>(
                  py::length(std::string_view(src_).substr(line_start_, at - line_start_)));
  }

  Token& push(Tok type, std::string text, size_t at) {
    Token t{type, std::move(text)};
    locate(at, t.line, t.col);
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }

  [[noreturn]] void error_at(size_t at, const std::string& message) {
    int line, col;
    locate(at, line, col);
    syntax_error(line, col, message);
  }

  bool starts(size_t at, std::string_view what) const {
    return src_.compare(at, what.size(), what) == 0;
  }

  // Emits text that precedes a tag, applying `-` (strip all) or lstrip_blocks.
  void emit_text(size_t begin, size_t end, char sign, bool lstrip_allowed) {
    std::string_view text(src_.data() + begin, end - begin);
    if (sign == '-') {
      text.remove_suffix(rstrip_len(text));
    } else if (sign != '+' && lstrip_allowed) {
      size_t nl = text.rfind('\n');
      size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && all_space(text.substr(l_pos))) {
        text = text.substr(0, l_pos);
      }
    }
    if (!text.empty()) push(Tok::Data, std::string(text), begin);
  }

  // `{% raw %}`: returns the position after the opening tag, or npos.
  size_t match_raw_begin(size_t at) const {
    size_t i = at + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    i = skip_space(src_, i);
    if (!starts(i, "raw")) return std::string::npos;
    i = skip_space(src_, i + 3);
    if (starts(i, "-%}")) return skip_space(src_, i + 3);
    if (starts(i, "%}")) return i + 2;
    return std::string::npos;
  }

  void lex_root() {
    size_t at = pos_;
    while (true) {
      at = src_.find('{', at);
      if (at == std::string::npos || at + 1 >= src_.size()) {
        push(Tok::Data, src_.substr(pos_), pos_);
        line_starting_ = src_.back() == '\n';
        pos_ = src_.size();
        return;
      }
      char kind = src_[at + 1];
      if (kind == '{' || kind == '%' || kind == '#') break;
      ++at;
    }
    const char kind = src_[at + 1];
    char sign = at + 2 < src_.size() ? src_[at + 2] : 0;
    if (sign != '-' && sign != '+') sign = 0;
    if (kind == '%') {
      size_t body = match_raw_begin(at);
      if (body != std::string::npos) {
        emit_text(pos_, at, sign, true);
        lex_raw(body);
        return;
      }
    }
    emit_text(pos_, at, sign, kind != '{');
    const size_t after = at + 2 + (sign ? 1 : 0);
    line_starting_ = false;
    if (kind == '#') {
      lex_comment(after);
    } else {
      push(kind == '{' ? Tok::VarBegin : Tok::BlockBegin, "", at);
      lex_tag(after, kind == '{');
    }
  }

  void lex_raw(size_t body) {
    // The body runs to the first `{%[-+]? endraw %}`.
    for (size_t at = src_.find("{%", body); at != std::string::npos; at = src_.find("{%", at + 1)) {
      size_t i = at + 2;
      char sign = 0;
      if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) sign = src_[i++];
      i = skip_space(src_, i);
      if (!starts(i, "endraw")) continue;
      i = skip_space(src_, i + 6);
      size_t end;
      if (starts(i, "+%}")) {
        end = i + 3;
      } else if (starts(i, "-%}")) {
        end = skip_space(src_, i + 3);
      } else if (starts(i, "%}")) {
        end = i + 2 + (starts(i + 2, "\n") ? 1 : 0);
      } else {
        continue;
      }
      emit_text(body, at, sign, true);
      pos_ = end;
      line_starting_ = src_[end - 1] == '\n';
      return;
    }
    error_at(body, "Missing end of raw directive");
  }

  void lex_comment(size_t body) {
    for (size_t at = body; at < src_.size(); ++at) {
      size_t end = std::string::npos;
      if (starts(at, "+#}")) {
        end = at + 3;
      } else if (starts(at, "-#}")) {
        end = skip_space(src_, at + 3);
      } else if (starts(at, "#}")) {
        end = at + 2 + (starts(at + 2, "\n") ? 1 : 0);
      }
      if (end != std::string::npos) {
        pos_ = end;
        line_starting_ = src_[end - 1] == '\n';
        return;
      }
    }
    error_at(body, "Missing end of comment tag");
  }

  // Inside {{ }} or {% %}: expression tokens until the (balanced) closing tag.
  void lex_tag(size_t i, bool variable) {
    const size_t open = i;
    while (true) {
      if (i >= src_.size()) {
        error_at(open, variable ? "unexpected end of template, expected 'end of print statement'"
                                : "unexpected end of template, expected 'end of statement block'");
      }
      if (balance_.empty()) {
        size_t end = std::string::npos;
        if (variable) {
          if (starts(i, "-}}")) {
            end = skip_space(src_, i + 3);
          } else if (starts(i, "}}")) {
            end = i + 2;
          }
        } else if (starts(i, "+%}")) {
          end = i + 3;
        } else if (starts(i, "-%}")) {
          end = skip_space(src_, i + 3);
        } else if (starts(i, "%}")) {
          end = i + 2 + (starts(i + 2, "\n") ? 1 : 0);
        }
        if (end != std::string::npos) {
          push(variable ? Tok::VarEnd : Tok::BlockEnd, "", i);
          pos_ = end;
          line_starting_ = src_[end - 1] == '\n';
          return;
        }
      }
      size_t len;
      if (space_at(src_, i, len)) {
        i = skip_space(src_, i);
        continue;
      }
      i = lex_token(i);
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (static_cast<unsigned char>(c) >= 0x80);
  }
  static bool name_char(char c) { return name_start(c) || digit(c); }

  // (\d+_)*\d+ starting at i; returns end or i when absent.
  size_t digits_at(size_t i) const {
    size_t j = i;
    while (j < src_.size() && digit(src_[j])) {
      ++j;
      if (j + 1 < src_.size() && src_[j] == '_' && digit(src_[j + 1])) ++j;
    }
    return j;
  }

  size_t lex_number(size_t i) {
    // float: digits ((.digits)? e[+-]?digits | .digits), not preceded by '.'
    const bool after_dot = i > 0 && src_[i - 1] == '.';
    size_t int_end = digits_at(i);
    if (!after_dot) {
      size_t j = int_end;
      bool is_float = false;
      if (j < src_.size() && src_[j] == '.' && j + 1 < src_.size() && digit(src_[j + 1])) {
        j = digits_at(j + 1);
        is_float = true;
      }
      if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
        size_t k = j + 1;
        if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
        if (k < src_.size() && digit(src_[k])) {
          j = digits_at(k);
          is_float = true;
        }
      }
      if (is_float) {
        std::string text;
        for (size_t k = i; k < j; ++k) {
          if (src_[k] != '_') text.push_back(src_[k]);
        }
        push(Tok::Float, text, i).float_value = std::strtod(text.c_str(), nullptr);
        return j;
      }
    }
    // integer: 0b / 0o / 0x prefixes, [1-9](_?\d)*, 0(_?0)*
    int base = 10;
    size_t j = i;
    if (src_[i] == '0' && i + 1 < src_.size()) {
      char p = static_cast<char>(src_[i + 1] | 0x20);
      base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 10;
    }
    auto in_base = [&](char c) {
      int v = digit(c)                                 ? c - '0'
              : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                       : 99;
      return v < base;
    };
    std::string text;
    if (base != 10) {
      j = i + 2;
      while (j < src_.size() && (in_base(src_[j]) ||
                                 (src_[j] == '_' && j + 1 < src_.size() && in_base(src_[j + 1])))) {
        if (src_[j] != '_') text.push_back(src_[j]);
        ++j;
      }
      if (text.empty()) {
        base = 10;  // just "0"
        j = i + 1;
        text.assign(1, '0');
      }
    } else if (src_[i] == '0') {
      j = i + 1;
      while (j + 1 < src_.size() && (src_[j] == '0' || (src_[j] == '_' && src_[j + 1] == '0'))) ++j;
      if (j < src_.size() && src_[j] == '0') ++j;
      text.assign(1, '0');
    } else {
      j = int_end;
      for (size_t k = i; k < j; ++k) {
        if (src_[k] != '_') text.push_back(src_[k]);
      }
    }
    errno = 0;
    auto value = std::strtoll(text.c_str(), nullptr, base);
    if (errno == ERANGE) error_at(i, "integer literal too large");
    push(Tok::Int, text, i).int_value = value;
    return j;
  }

  size_t lex_string(size_t i) {
    const char quote = src_[i];
    std::string value;
    size_t j = i + 1;
    for (; j < src_.size() && src_[j] != quote; ++j) {
      if (src_[j] != '\\') {
        value.push_back(src_[j]);
        continue;
      }
      if (++j >= src_.size()) break;
      const char c = src_[j];
      auto hex_escape = [&](int digits) {
        uint32_t cp = 0;
        for (int k = 0; k < digits; ++k) {
          char h = j + 1 < src_.size() ? src_[j + 1] : 0;
          int v = digit(h)                                 ? h - '0'
                  : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10
                                                           : -1;
          if (v < 0) error_at(j, "truncated escape sequence in string literal");
          cp = cp * 16 + static_cast<uint32_t>(v);
          ++j;
        }
        if (cp > 0x10FFFF) error_at(j, "illegal Unicode character in string literal");
        py::append_utf8(value, cp);
      };
      switch (c) {
        case '\n':
          break;  // line continuation
        case '\\':
        case '\'':
        case '"':
          value.push_back(c);
          break;
        case 'a':
          value.push_back('\a');
          break;
        case 'b':
          value.push_back('\b');
          break;
        case 'f':
          value.push_back('\f');
          break;
        case 'n':
          value.push_back('\n');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'v':
          value.push_back('\v');
          break;
        case 'x':
          hex_escape(2);
          break;
        case 'u':
          hex_escape(4);
          break;
        case 'U':
          hex_escape(8);
          break;
        default:
          if (c >= '0' && c <= '7') {
            uint32_t cp = static_cast<uint32_t>(c - '0');
            for (int k = 0;
                 k < 2 && j + 1 < src_.size() && src_[j + 1] >= '0' && src_[j + 1] <= '7'; ++k) {
              cp = cp * 8 + static_cast<uint32_t>(src_[++j] - '0');
            }
            py::append_utf8(value, cp);
          } else {
            value.push_back('\\');
            value.push_back(c);
          }
      }
    }
    if (j >= src_.size()) error_at(i, cat("unexpected char ", py::repr(std::string(1, quote))));
    push(Tok::String, std::move(value), i);
    return j + 1;
  }

  size_t lex_token(size_t i) {
    const char c = src_[i];
    if (digit(c)) return lex_number(i);
    if (name_start(c)) {
      size_t j = i;
      while (j < src_.size() && name_char(src_[j])) ++j;
      push(Tok::Name, src_.substr(i, j - i), i);
      return j;
    }
    if (c == '\'' || c == '"') return lex_string(i);
    static const char* two[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : two) {
      if (starts(i, op)) {
        push(Tok::Op, op, i);
        return i + 2;
      }
    }
    static const std::string_view one = "+-/*%~[](){}><=.:|,;";
    if (one.find(c) == std::string_view::npos) {
      error_at(i, "unexpected char " + py::repr(src_.substr(i, 1)) + " at " + std::to_string(i));
    }
    if (c == '(' || c == '[' || c == '{') {
      balance_.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance_.empty()) error_at(i, std::string("unexpected '") + c + "'");
      char expected = balance_.back();
      balance_.pop_back();
      if (expected != c) {
        error_at(i, std::string("unexpected '") + c + "', expected '" + expected + "'");
      }
    }
    push(Tok::Op, std::string(1, c), i);
    return i + 1;
  }
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
  return Lexer(source).run();
}

}  // namespace heron::chat::jinja
