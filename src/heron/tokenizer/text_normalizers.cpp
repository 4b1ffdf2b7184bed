// Small text normalizers of tokenizer.json: Lowercase, Replace, Prepend, Append, Strip,
// StripAccents, each matching the HF `tokenizers` step of the same name.
#include <optional>

#include "heron/tokenizer/normalizer.h"
#include "heron/tokenizer/regex.h"
#include "heron/tokenizer/unicode_props.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

class Lowercase final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const utf8::Decoded d = utf8::decode(text, i);
      unicode::append_lowercase(out, d.cp);
      i += d.len;
    }
    text = std::move(out);
  }
};

class Replace final : public Normalizer {
 public:
  Replace(std::string pattern, bool regex, std::string content)
      : regex_(regex ? Regex::pattern(pattern) : Regex::literal(pattern)),
        content_(std::move(content)) {}
  void normalize(std::string& text) const override {
    thread_local std::vector<Span> matches;
    matches.clear();
    regex_.find_all(text, matches);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size() + matches.size() * content_.size());
    size_t pos = 0;
    for (const Span& m : matches) {
      out.append(text, pos, m.begin - pos);
      out += content_;
      pos = m.end;
    }
    out.append(text, pos);
    text = std::move(out);
  }

 private:
  Regex regex_;
  std::string content_;
};

class Affix final : public Normalizer {
 public:
  Affix(std::string affix, bool prepend) : affix_(std::move(affix)), prepend_(prepend) {}
  void normalize(std::string& text) const override {
    if (text.empty()) return;
    if (prepend_) {
      text.insert(0, affix_);
    } else {
      text += affix_;
    }
  }

 private:
  std::string affix_;
  bool prepend_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        const utf8::Decoded d = utf8::decode(text, begin);
        if (!unicode::is_white_space(d.cp)) break;
        begin += d.len;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
        if (!unicode::is_white_space(utf8::decode(text, start).cp)) break;
        end = start;
      }
    }
    if (begin > 0 || end < text.size()) text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const utf8::Decoded d = utf8::decode(text, i);
      if (!unicode::is_combining_mark_v9(d.cp)) out.append(text, i, d.len);
      i += d.len;
    }
    text = std::move(out);
  }
};

}  // namespace

std::unique_ptr<Normalizer> make_lowercase() {
  return std::make_unique<Lowercase>();
}
std::unique_ptr<Normalizer> make_replace(std::string pattern, bool regex, std::string content) {
  return std::make_unique<Replace>(std::move(pattern), regex, std::move(content));
}
std::unique_ptr<Normalizer> make_prepend(std::string prefix) {
  return std::make_unique<Affix>(std::move(prefix), true);
}
std::unique_ptr<Normalizer> make_append(std::string suffix) {
  return std::make_unique<Affix>(std::move(suffix), false);
}
std::unique_ptr<Normalizer> make_strip(bool left, bool right) {
  return std::make_unique<Strip>(left, right);
}
std::unique_ptr<Normalizer> make_strip_accents() {
  return std::make_unique<StripAccents>();
}

}  // namespace heron::tokenizer
