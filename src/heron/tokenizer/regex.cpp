#include "heron/tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "heron/core/error.h"

namespace heron::tokenizer {
namespace {

// Unicode White_Space, the set Oniguruma (and Rust's regex) mean by \s.
constexpr std::string_view kSpaceSet =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";
constexpr std::string_view kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

// Per-thread scratch: one match data and JIT stack serve every pattern, since a thread
// runs one match at a time.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  MatchState() {
    if (jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

std::string Regex::translate(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 32);
  bool in_class = false;
  size_t class_start = 0;  // index just past "[" or "[^": a "]" there is a literal
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[++i];
      if (e == 's' || e == 'w') {
        const std::string_view set = e == 's' ? kSpaceSet : kWordSet;
        if (in_class) {
          out += set;
        } else {
          out += '[';
          out += set;
          out += ']';
        }
      } else if (e == 'S' || e == 'W') {
        if (in_class) {
          throw Error("regex /" + std::string(p) + "/: \\" + e +
                      " inside a character class is not supported");
        }
        out += "[^";
        out += e == 'S' ? kSpaceSet : kWordSet;
        out += ']';
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      class_start = i + 1;
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const size_t close = p.find(":]", i + 2);  // POSIX class like [:alpha:]
      if (close != std::string_view::npos) {
        out += p.substr(i, close + 2 - i);
        i = close + 1;
        continue;
      }
    }
    if (in_class && c == ']' && i != class_start) in_class = false;
    out += c;
  }
  return out;
}

Regex::Regex(std::string source, std::string compiled, bool literal) : source_(std::move(source)) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  // Compiling checks the pattern's UTF-8. UCP is not allowed (nor needed) with LITERAL.
  const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled.data()), compiled.size(),
                                   options, &err, &err_offset, nullptr);
  if (code == nullptr) {
    throw Error("tokenizer regex /" + source_ + "/ does not compile: " + pcre2_message(err) +
                " (at offset " + std::to_string(err_offset) + " of /" + compiled + "/)");
  }
  auto owned = std::make_shared<Code>();
  owned->code = code;
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // failure just means interpreted matching
  code_ = std::move(owned);
}

Regex Regex::pattern(std::string_view oniguruma_pattern) {
  return Regex(std::string(oniguruma_pattern), translate(oniguruma_pattern), false);
}

Regex Regex::literal(std::string_view text) {
  return Regex(std::string(text), std::string(text), true);
}

void Regex::find_all(std::string_view text, std::vector<Span>& out) const {
  MatchState& st = match_state();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, st.data,
                               st.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      throw Error("tokenizer regex /" + source_ + "/ failed: " + pcre2_message(rc));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    if (ov[1] == ov[0]) {
      // Empty match: step over one code point, as Oniguruma's iterator does.
      pos = ov[0] + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    out.push_back({ov[0], ov[1]});
    pos = ov[1];
  }
}

}  // namespace heron::tokenizer
