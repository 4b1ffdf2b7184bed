#include "heron/tokenizer/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include <vector>

#include "heron/core/error.h"
#include "heron/tokenizer/json_util.h"

namespace heron::tokenizer {
namespace {

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) {
    UErrorCode status = U_ZERO_ERROR;
    switch (form) {
      case UnicodeForm::NFC:
        impl_ = icu::Normalizer2::getNFCInstance(status);
        break;
      case UnicodeForm::NFD:
        impl_ = icu::Normalizer2::getNFDInstance(status);
        break;
      case UnicodeForm::NFKC:
        impl_ = icu::Normalizer2::getNFKCInstance(status);
        break;
      case UnicodeForm::NFKD:
        impl_ = icu::Normalizer2::getNFKDInstance(status);
        break;
    }
    if (U_FAILURE(status) || impl_ == nullptr) {
      throw Error(std::string("ICU normalizer unavailable: ") + u_errorName(status));
    }
  }

  void normalize(std::string& text) const override {
    // ASCII is invariant under every form; most prompts stop here.
    bool ascii = true;
    for (char c : text) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return;
    UErrorCode status = U_ZERO_ERROR;
    const icu::StringPiece piece(text.data(), static_cast<int32_t>(text.size()));
    if (impl_->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) return;
    status = U_ZERO_ERROR;
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    icu::StringByteSink<std::string> sink(&out);
    impl_->normalizeUTF8(0, piece, sink, nullptr, status);
    if (U_FAILURE(status))
      throw Error(std::string("unicode normalization failed: ") + u_errorName(status));
    text = std::move(out);
  }

 private:
  const icu::Normalizer2* impl_ = nullptr;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& s : steps_) s->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_sequence_normalizer(
    std::vector<std::unique_ptr<Normalizer>> steps) {
  if (steps.empty()) return nullptr;
  if (steps.size() == 1) return std::move(steps.front());
  return std::make_unique<SequenceNormalizer>(std::move(steps));
}

std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form) {
  return std::make_unique<UnicodeNormalizer>(form);
}

namespace {

// Replace's pattern: {"String": ...} or {"Regex": ...}.
std::pair<std::string, bool> pattern_of(const nlohmann::json& spec, const std::string& what) {
  const auto& pattern = json_object(spec, "pattern", what);
  if (pattern.contains("Regex")) return {json_string(pattern, "Regex", what), true};
  if (pattern.contains("String")) return {json_string(pattern, "String", what), false};
  throw Error("tokenizer.json: " + what + " pattern needs a 'Regex' or a 'String'");
}

std::unique_ptr<Normalizer> parse(const nlohmann::json& spec, int depth) {
  if (spec.is_null()) return nullptr;
  if (depth > 32) throw Error("tokenizer.json: normalizer Sequence is nested too deeply");
  const std::string type = json_string(spec, "type", "normalizer");
  const std::string what = type + " normalizer";
  if (type == "NFC") return make_unicode_normalizer(UnicodeForm::NFC);
  if (type == "NFD") return make_unicode_normalizer(UnicodeForm::NFD);
  if (type == "NFKC") return make_unicode_normalizer(UnicodeForm::NFKC);
  if (type == "NFKD") return make_unicode_normalizer(UnicodeForm::NFKD);
  if (type == "Lowercase") return make_lowercase();
  if (type == "StripAccents") return make_strip_accents();
  if (type == "Strip") {
    return make_strip(json_bool_or(spec, "strip_left", true, what),
                      json_bool_or(spec, "strip_right", true, what));
  }
  if (type == "Prepend") return make_prepend(json_string(spec, "prepend", what));
  if (type == "Append") return make_append(json_string(spec, "append", what));
  if (type == "Replace") {
    auto [pattern, regex] = pattern_of(spec, what);
    if (pattern.empty()) throw Error("tokenizer.json: Replace normalizer has an empty pattern");
    return make_replace(std::move(pattern), regex, json_string(spec, "content", what));
  }
  if (type == "BertNormalizer") {
    BertNormalizerOptions o;
    o.clean_text = json_bool_or(spec, "clean_text", true, what);
    o.handle_chinese_chars = json_bool_or(spec, "handle_chinese_chars", true, what);
    o.lowercase = json_bool_or(spec, "lowercase", true, what);
    // null means "as lowercase", as in BERT's original tokenizer.
    o.strip_accents = json_bool_or(spec, "strip_accents", o.lowercase, what);
    return make_bert_normalizer(o);
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const auto& s : json_array(spec, "normalizers", "normalizer Sequence")) {
      if (auto n = parse(s, depth + 1)) steps.push_back(std::move(n));
    }
    return make_sequence_normalizer(std::move(steps));
  }
  throw Error("tokenizer.json: normalizer type '" + type + "' is not supported yet");
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& spec) {
  return parse(spec, 0);
}

}  // namespace heron::tokenizer
