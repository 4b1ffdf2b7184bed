#pragma once
// tokenizer.json "normalizer" step: rewrites the text before pre-tokenization.
// Unicode forms come from ICU, so NFC/NFD/NFKC/NFKD follow ICU's Unicode version
// (15.0 on Debian 12); HF `tokenizers` may be a version apart, which only matters for
// characters added in between.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // In place; text is valid UTF-8 and stays so.
  virtual void normalize(std::string& text) const = 0;
};

// From a tokenizer.json "normalizer" value; nullptr for null (or an empty Sequence).
// Throws heron::Error for malformed or not yet supported normalizers.
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& spec);

enum class UnicodeForm { NFC, NFD, NFKC, NFKD };
std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form);

// Runs `steps` in order (nullptr when empty).
std::unique_ptr<Normalizer> make_sequence_normalizer(
    std::vector<std::unique_ptr<Normalizer>> steps);

// text_normalizers.cpp
std::unique_ptr<Normalizer> make_lowercase();
// pattern: a literal, or an Oniguruma regex when `regex` is true.
std::unique_ptr<Normalizer> make_replace(std::string pattern, bool regex, std::string content);
// Prepend/Append leave empty text empty, as HF does.
std::unique_ptr<Normalizer> make_prepend(std::string prefix);
std::unique_ptr<Normalizer> make_append(std::string suffix);
std::unique_ptr<Normalizer> make_strip(bool left, bool right);
std::unique_ptr<Normalizer> make_strip_accents();

// bert_normalizer.cpp
struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};
std::unique_ptr<Normalizer> make_bert_normalizer(BertNormalizerOptions options);

}  // namespace heron::tokenizer
