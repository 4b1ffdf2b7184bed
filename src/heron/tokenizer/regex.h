#pragma once
// Compiled PCRE2 pattern for pre-tokenizer splits. Compiled once (JIT when available)
// and safe to use from many threads at once: match data lives in thread-local storage.
//
// tokenizer.json patterns are written for Oniguruma (what HF `tokenizers` uses), so a
// few escapes are rewritten to keep Oniguruma's meaning: \s/\S are Unicode White_Space
// (PCRE2 also counts U+180E), \w/\W are UTS #18's word characters: Alphabetic, marks,
// decimal digits, connector punctuation and Join_Control (PCRE2 counts all numbers but only
// letters, so it misses e.g. Roman numerals, and only "_").
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heron::tokenizer {

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

class Regex {
 public:
  // Throws heron::Error naming the pattern when it does not compile.
  static Regex pattern(std::string_view oniguruma_pattern);
  static Regex literal(std::string_view text);

  // Appends every non-empty, non-overlapping match, left to right. `text` must be valid
  // UTF-8 (the pipeline sanitizes input first; it is not re-checked here).
  void find_all(std::string_view text, std::vector<Span>& out) const;

  const std::string& source() const { return source_; }

  // Exposed for tests: the PCRE2 spelling of an Oniguruma pattern.
  static std::string translate(std::string_view oniguruma_pattern);

 private:
  struct Code;
  Regex(std::string source, std::string compiled, bool literal);

  std::string source_;
  std::shared_ptr<const Code> code_;
};

}  // namespace heron::tokenizer
