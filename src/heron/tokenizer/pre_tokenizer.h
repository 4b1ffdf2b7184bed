#pragma once
// tokenizer.json "pre_tokenizer" step: cuts normalized text into pieces ("words") that
// the model tokenizes independently. Pieces are spans into one working buffer; a step
// that must change text (ByteLevel's prefix space) appends the new text to the buffer.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/tokenizer/regex.h"

namespace heron::tokenizer {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` (non-empty spans into `buf`) with their refinement. `origin_len`:
  // bytes at the start of `buf` that stem from the input's first character (Metaspace's
  // "first" scheme; 0 when `buf` does not begin the input).
  virtual void split(std::string& buf, std::vector<Span>& pieces, size_t origin_len) const = 0;
  // True when the chain maps text to GPT-2 byte-level symbols (contains ByteLevel).
  virtual bool byte_level() const { return false; }
};

// HF SplitDelimiterBehavior: what happens to the pattern's matches.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// One piece cut into match / non-match parts covering it in order.
struct SplitPart {
  Span span;
  bool match;
};
// Appends the non-empty spans HF's behavior makes of `parts`.
void apply_behavior(const std::vector<SplitPart>& parts, SplitBehavior behavior,
                    std::vector<Span>& out);
SplitBehavior parse_behavior(const std::string& name);

std::unique_ptr<PreTokenizer> make_split(Regex regex, SplitBehavior behavior, bool invert);
// GPT-2 ByteLevel: optional prefix space on every piece, optional GPT-2 regex split.
std::unique_ptr<PreTokenizer> make_byte_level(bool add_prefix_space, bool use_regex);
std::unique_ptr<PreTokenizer> make_digits(bool individual_digits);
std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps);

// pre_tokenizer_chars.cpp: splits on character classes, as HF does (each matching
// character is its own match).
std::unique_ptr<PreTokenizer> make_whitespace_split();  // on White_Space, removed
std::unique_ptr<PreTokenizer> make_whitespace();        // \w+|[^\w\s]+
std::unique_ptr<PreTokenizer> make_punctuation(SplitBehavior behavior);
std::unique_ptr<PreTokenizer> make_char_delimiter(char32_t delimiter);
std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();
enum class PrependScheme { Always, First, Never };
std::unique_ptr<PreTokenizer> make_metaspace(char32_t replacement, PrependScheme scheme,
                                             bool split);

// From a tokenizer.json "pre_tokenizer" value; nullptr for null. Throws heron::Error for
// malformed or not yet supported pre-tokenizers (including regexes that do not compile).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& spec);

// The GPT-2 split pattern ByteLevel uses when use_regex is true.
extern const std::string_view kGpt2Pattern;

}  // namespace heron::tokenizer
