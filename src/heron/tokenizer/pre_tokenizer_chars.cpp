// Pre-tokenizers that split on character classes (Whitespace, WhitespaceSplit,
// Punctuation, CharDelimiterSplit, BertPreTokenizer) and Metaspace. HF treats every
// matching character as a match of its own, then applies the split behavior.
#include "heron/tokenizer/pre_tokenizer.h"
#include "heron/tokenizer/unicode_props.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

using CharClass = bool (*)(char32_t);

// Parts of buf[piece] where each character with `is_match` is its own match.
void char_parts(std::string_view buf, const Span& piece, CharClass is_match,
                std::vector<SplitPart>& parts) {
  size_t run = piece.begin;  // start of the pending non-match run
  for (size_t i = piece.begin; i < piece.end;) {
    const utf8::Decoded d = utf8::decode(buf, i);
    if (is_match(d.cp)) {
      if (i > run) parts.push_back({{run, i}, false});
      parts.push_back({{i, i + d.len}, true});
      run = i + d.len;
    }
    i += d.len;
  }
  if (piece.end > run) parts.push_back({{run, piece.end}, false});
}

class CharSplit final : public PreTokenizer {
 public:
  CharSplit(CharClass is_match, SplitBehavior behavior)
      : is_match_(is_match), behavior_(behavior) {}
  void split(std::string& buf, std::vector<Span>& pieces, size_t) const override {
    thread_local std::vector<Span> out;
    thread_local std::vector<SplitPart> parts;
    out.clear();
    for (const Span& piece : pieces) {
      parts.clear();
      char_parts(buf, piece, is_match_, parts);
      apply_behavior(parts, behavior_, out);
    }
    pieces.assign(out.begin(), out.end());
  }

 private:
  CharClass is_match_;
  SplitBehavior behavior_;
};

bool bert_punctuation(char32_t c) {
  return unicode::is_punctuation_v8(c);  // includes ASCII punctuation
}

// HF splits on the delimiter and removes it.
std::unique_ptr<PreTokenizer> char_delimiter(char32_t delimiter) {
  std::string d;
  utf8::append(d, delimiter);
  return make_split(Regex::literal(d), SplitBehavior::Removed, false);
}

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {
    utf8::append(rep_, replacement);
  }

  void split(std::string& buf, std::vector<Span>& pieces, size_t origin_len) const override {
    thread_local std::vector<Span> out;
    thread_local std::vector<SplitPart> parts;
    out.clear();
    std::string text;
    for (const Span& piece : pieces) {
      text.clear();
      for (size_t i = piece.begin; i < piece.end; ++i) {
        if (buf[i] == ' ') {
          text += rep_;
        } else {
          text += buf[i];
        }
      }
      // "first": only a piece that starts at the input's first character (HF: original
      // offset 0).
      const bool prepend = scheme_ == PrependScheme::Always ||
                           (scheme_ == PrependScheme::First && piece.begin < origin_len);
      if (prepend && text.compare(0, rep_.size(), rep_) != 0) text.insert(0, rep_);
      Span span = piece;
      if (text.size() != piece.end - piece.begin ||
          text.compare(0, text.size(), buf, piece.begin, piece.end - piece.begin) != 0) {
        span = {buf.size(), buf.size() + text.size()};
        buf += text;
      }
      if (!split_) {
        out.push_back(span);
        continue;
      }
      parts.clear();
      size_t run = span.begin;
      for (size_t i = span.begin; i < span.end;) {
        const utf8::Decoded d = utf8::decode(buf, i);
        if (d.cp == replacement_) {
          if (i > run) parts.push_back({{run, i}, false});
          parts.push_back({{i, i + d.len}, true});
          run = i + d.len;
        }
        i += d.len;
      }
      if (span.end > run) parts.push_back({{run, span.end}, false});
      apply_behavior(parts, SplitBehavior::MergedWithNext, out);
    }
    pieces.assign(out.begin(), out.end());
  }

 private:
  char32_t replacement_;
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_whitespace_split() {
  return std::make_unique<CharSplit>(unicode::is_white_space, SplitBehavior::Removed);
}

std::unique_ptr<PreTokenizer> make_whitespace() {
  // HF keeps the matches of \w+|[^\w\s]+ (Oniguruma classes) and drops the rest.
  return make_split(Regex::pattern("\\w+|[^\\w\\s]+"), SplitBehavior::Removed, true);
}

std::unique_ptr<PreTokenizer> make_punctuation(SplitBehavior behavior) {
  return std::make_unique<CharSplit>(bert_punctuation, behavior);
}

std::unique_ptr<PreTokenizer> make_char_delimiter(char32_t delimiter) {
  return char_delimiter(delimiter);
}

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(make_whitespace_split());
  steps.push_back(std::make_unique<CharSplit>(bert_punctuation, SplitBehavior::Isolated));
  return make_sequence(std::move(steps));
}

std::unique_ptr<PreTokenizer> make_metaspace(char32_t replacement, PrependScheme scheme,
                                             bool split) {
  return std::make_unique<Metaspace>(replacement, scheme, split);
}

}  // namespace heron::tokenizer
