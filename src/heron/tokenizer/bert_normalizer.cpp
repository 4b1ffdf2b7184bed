// HF's BertNormalizer: clean control characters and whitespace, space out CJK
// ideographs, strip accents (NFD, then drop nonspacing marks), lowercase — in that order.
#include "heron/tokenizer/normalizer.h"
#include "heron/tokenizer/unicode_props.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

class BertNormalizer final : public Normalizer {
 public:
  explicit BertNormalizer(BertNormalizerOptions o)
      : o_(o), nfd_(o.strip_accents ? make_unicode_normalizer(UnicodeForm::NFD) : nullptr) {}

  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (size_t i = 0; i < text.size();) {
      const utf8::Decoded d = utf8::decode(text, i);
      const std::string_view ch = std::string_view(text).substr(i, d.len);
      i += d.len;
      char32_t c = d.cp;
      if (o_.clean_text) {
        if (c == 0 || c == 0xFFFD ||
            (c != '\t' && c != '\n' && c != '\r' && unicode::is_control_v8(c))) {
          continue;
        }
        if (unicode::is_white_space(c)) {
          out += ' ';
          continue;
        }
      }
      if (o_.handle_chinese_chars && unicode::is_cjk_ideograph(c)) {
        out += ' ';
        out += ch;
        out += ' ';
        continue;
      }
      out += ch;
    }
    if (o_.strip_accents) {
      nfd_->normalize(out);
      std::string kept;
      kept.reserve(out.size());
      for (size_t i = 0; i < out.size();) {
        const utf8::Decoded d = utf8::decode(out, i);
        if (!unicode::is_nonspacing_mark_v8(d.cp)) kept.append(out, i, d.len);
        i += d.len;
      }
      out = std::move(kept);
    }
    if (o_.lowercase) {
      std::string lower;
      lower.reserve(out.size());
      for (size_t i = 0; i < out.size();) {
        const utf8::Decoded d = utf8::decode(out, i);
        unicode::append_lowercase(lower, d.cp);
        i += d.len;
      }
      out = std::move(lower);
    }
    text = std::move(out);
  }

 private:
  BertNormalizerOptions o_;
  std::unique_ptr<Normalizer> nfd_;
};

}  // namespace

std::unique_ptr<Normalizer> make_bert_normalizer(BertNormalizerOptions options) {
  return std::make_unique<BertNormalizer>(options);
}

}  // namespace heron::tokenizer
