// Decoder steps that rewrite text: Replace, Strip, Metaspace (see decoder.h).
#include <optional>

#include "heron/core/error.h"
#include "heron/tokenizer/decoder_stage.h"
#include "heron/tokenizer/regex.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

using namespace decoder_detail;

// --------------------------------------------------------------------------- Replace
// Literal patterns stream: only a tail that could begin a match is held back.

class ReplaceLiteralStage final : public Stage {
 public:
  ReplaceLiteralStage(DecodeSink& next, const std::string& pattern, const std::string& content)
      : Stage(next), pattern_(pattern), content_(content) {}
  void push(std::string_view text, bool, bool ends) override {
    held_ += text;
    std::string out;
    size_t pos = 0;
    for (size_t m; (m = held_.find(pattern_, pos)) != std::string::npos;
         pos = m + pattern_.size()) {
      out.append(held_, pos, m - pos);
      out += content_;
    }
    size_t keep = 0;
    if (!ends) {
      const std::string_view rest = std::string_view(held_).substr(pos);
      for (size_t k = std::min(rest.size(), pattern_.size() - 1); k > 0; --k) {
        if (rest.substr(rest.size() - k) == std::string_view(pattern_).substr(0, k)) {
          keep = k;
          break;
        }
      }
    }
    out.append(held_, pos, held_.size() - pos - keep);
    held_.erase(0, held_.size() - keep);
    emit(out, ends);
  }

 private:
  const std::string& pattern_;
  const std::string& content_;
  std::string held_;
};

class ReplaceRegexStage final : public Stage {
 public:
  ReplaceRegexStage(DecodeSink& next, const Regex& regex, const std::string& content)
      : Stage(next), regex_(regex), content_(content) {}
  void push(std::string_view text, bool, bool ends) override {
    token_ += text;
    if (!ends) return;
    std::vector<Span> matches;
    regex_.find_all(token_, matches);
    std::string out;
    size_t pos = 0;
    for (const Span& m : matches) {
      out.append(token_, pos, m.begin - pos);
      out += content_;
      pos = m.end;
    }
    out.append(token_, pos);
    token_.clear();
    emit(out, true);
  }

 private:
  const Regex& regex_;
  const std::string& content_;
  std::string token_;
};

class ReplaceStep final : public DecoderStep {
 public:
  ReplaceStep(std::string pattern, bool regex, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {
    if (pattern_.empty()) throw Error("tokenizer.json: Replace decoder has an empty pattern");
    if (regex) regex_ = Regex::pattern(pattern_);
  }
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    if (regex_) return std::make_unique<ReplaceRegexStage>(next, *regex_, content_);
    return std::make_unique<ReplaceLiteralStage>(next, pattern_, content_);
  }
  void middle(std::string& token) const override {
    if (!regex_) {
      replace_all(token, pattern_, content_);
      return;
    }
    std::vector<Span> matches;
    regex_->find_all(token, matches);
    std::string out;
    size_t pos = 0;
    for (const Span& m : matches) {
      out.append(token, pos, m.begin - pos);
      out += content_;
      pos = m.end;
    }
    out.append(token, pos);
    token = std::move(out);
  }

 private:
  std::string pattern_, content_;
  std::optional<Regex> regex_;
};

// ----------------------------------------------------------------------------- Strip
// HF: per token, up to `start` leading and `stop` trailing `content` characters go
// (the trailing ones never reaching into the leading cut). Trailing candidates are
// held until more text or the token's end decides.

class StripStage final : public Stage {
 public:
  StripStage(DecodeSink& next, char32_t content, size_t start, size_t stop)
      : Stage(next), content_(content), start_(start), stop_(stop) {}
  void push(std::string_view text, bool starts, bool ends) override {
    if (starts) {
      lead_ = 0;
      leading_ = true;
      tail_.clear();
      tail_chars_ = 0;
    }
    std::string out;
    for (size_t i = 0; i < text.size();) {
      const utf8::Decoded d = utf8::decode(text, i);
      const std::string_view ch = text.substr(i, d.len);
      i += d.len;
      if (leading_) {
        if (lead_ < start_ && d.cp == content_) {
          ++lead_;
          continue;
        }
        leading_ = false;
      }
      if (d.cp == content_ && stop_ > 0) {
        tail_ += ch;
        if (++tail_chars_ > stop_) {
          const size_t first = utf8::decode(tail_, 0).len;
          out.append(tail_, 0, first);
          tail_.erase(0, first);
          --tail_chars_;
        }
        continue;
      }
      out += tail_;
      tail_.clear();
      tail_chars_ = 0;
      out += ch;
    }
    emit(out, ends);  // at the end, the held tail is what gets stripped
  }

 private:
  char32_t content_;
  size_t start_, stop_;
  size_t lead_ = 0;
  bool leading_ = true;
  std::string tail_;
  size_t tail_chars_ = 0;
};

class StripStep final : public DecoderStep {
 public:
  StripStep(char32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<StripStage>(next, content_, start_, stop_);
  }
  void middle(std::string&) const override {}

 private:
  char32_t content_;
  size_t start_, stop_;
};

// ------------------------------------------------------------------------- Metaspace
// HF: the replacement character becomes a space, except in the first token, where
// (unless prepend_scheme is "never") every one of them is dropped.

class MetaspaceStage final : public Stage {
 public:
  MetaspaceStage(DecodeSink& next, const std::string& replacement, bool strip_first)
      : Stage(next), replacement_(replacement), strip_first_(strip_first) {}
  void push(std::string_view text, bool starts, bool ends) override {
    if (starts) ++tokens_;
    std::string out(text);
    replace_all(out, replacement_, tokens_ == 1 && strip_first_ ? "" : " ");
    emit(out, ends);
  }

 private:
  const std::string& replacement_;
  bool strip_first_;
  size_t tokens_ = 0;
};

class MetaspaceStep final : public DecoderStep {
 public:
  MetaspaceStep(char32_t replacement, bool strip_first)
      : replacement_(char_string(replacement)), strip_first_(strip_first) {}
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<MetaspaceStage>(next, replacement_, strip_first_);
  }
  void middle(std::string& token) const override { replace_all(token, replacement_, " "); }

 private:
  std::string replacement_;
  bool strip_first_;
};

}  // namespace

std::shared_ptr<const DecoderStep> make_replace_decoder(std::string pattern, bool regex,
                                                        std::string content) {
  return std::make_shared<ReplaceStep>(std::move(pattern), regex, std::move(content));
}

std::shared_ptr<const DecoderStep> make_strip_decoder(char32_t content, size_t start, size_t stop) {
  return std::make_shared<StripStep>(content, start, stop);
}

std::shared_ptr<const DecoderStep> make_metaspace_decoder(char32_t replacement, bool strip_first) {
  return std::make_shared<MetaspaceStep>(replacement, strip_first);
}

}  // namespace heron::tokenizer
