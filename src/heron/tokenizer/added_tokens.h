#pragma once
// Added tokens (special like "<|im_start|>" and plain like "<think>") are matched in the
// text before pre-tokenization, leftmost-longest, the way HF's AddedVocabulary does:
// tokens with normalized=false are found in the raw text, the rest in normalized text;
// single_word, lstrip and rstrip follow HF's rules (Unicode \w and White_Space).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "heron/tokenizer/normalizer.h"

namespace heron::tokenizer {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// A run of text still to tokenize (id < 0), or an added token's id.
struct Segment {
  std::string text;
  int32_t id = -1;
  // Bytes at the start of `text` that stem from the input's first character (0 when the
  // segment does not begin the input): Metaspace's "first" scheme.
  size_t origin_len = 0;
};

class AddedVocabulary {
 public:
  AddedVocabulary();
  // `normalizer` (may be null) is used to spell normalized tokens for matching.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);
  ~AddedVocabulary();
  AddedVocabulary(AddedVocabulary&&) noexcept;
  AddedVocabulary& operator=(AddedVocabulary&&) noexcept;

  // Splits `text` (valid UTF-8) into segments; text segments come out normalized.
  // parse_special=false leaves special tokens in the text as ordinary characters.
  void extract_and_normalize(std::string_view text, bool parse_special,
                             const Normalizer* normalizer, std::vector<Segment>& out) const;

  const AddedToken* find(int32_t id) const;
  std::optional<int32_t> token_to_id(std::string_view content) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  struct Trie;
  void split(std::string_view text, size_t origin_len, const Trie& trie, bool parse_special,
             std::vector<Segment>& out) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<int32_t, size_t> by_id_;
  std::unordered_map<std::string, int32_t> by_content_;
  std::unique_ptr<Trie> raw_trie_;         // normalized == false
  std::unique_ptr<Trie> normalized_trie_;  // normalized == true, spelled normalized
};

}  // namespace heron::tokenizer
