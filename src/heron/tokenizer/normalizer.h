#pragma once
// tokenizer.json "normalizer" step: rewrites the text before pre-tokenization.
// Unicode forms come from ICU, so NFC/NFD/NFKC/NFKD follow ICU's Unicode version
// (15.0 on Debian 12); HF `tokenizers` may be a version apart, which only matters for
// characters added in between.
#include <memory>
#include <string>

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

}  // namespace heron::tokenizer
