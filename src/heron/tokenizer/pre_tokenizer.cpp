#include "heron/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/json_util.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

const std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

void apply_behavior(const std::vector<SplitPart>& parts, SplitBehavior behavior,
                    std::vector<Span>& out) {
  const size_t first = out.size();
  bool prev_match = false;
  switch (behavior) {
    case SplitBehavior::Removed:
      for (const SplitPart& p : parts)
        if (!p.match) out.push_back(p.span);
      break;
    case SplitBehavior::Isolated:
      for (const SplitPart& p : parts) out.push_back(p.span);
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const SplitPart& p : parts) {
        if (p.match && !prev_match && out.size() > first) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        prev_match = p.match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      // Mirror image of MergedWithPrevious: walk backwards, then restore order.
      for (size_t i = parts.size(); i-- > 0;) {
        const SplitPart& p = parts[i];
        if (p.match && !prev_match && out.size() > first) {
          out.back().begin = p.span.begin;
        } else {
          out.push_back(p.span);
        }
        prev_match = p.match;
      }
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      break;
    case SplitBehavior::Contiguous:
      for (size_t i = 0; i < parts.size(); ++i) {
        const SplitPart& p = parts[i];
        if (i > 0 && p.match == prev_match) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        prev_match = p.match;
      }
      break;
  }
  // Drop empty spans (a split never yields empty pieces).
  size_t w = first;
  for (size_t r = first; r < out.size(); ++r)
    if (out[r].end > out[r].begin) out[w++] = out[r];
  out.resize(w);
}

SplitBehavior parse_behavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  throw Error("tokenizer.json: Split behavior '" + name + "' is unknown");
}

namespace {

class SplitPre final : public PreTokenizer {
 public:
  SplitPre(Regex regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}

  void split(std::string& buf, std::vector<Span>& pieces, size_t) const override {
    thread_local std::vector<Span> out, matches;
    thread_local std::vector<SplitPart> parts;
    out.clear();
    out.reserve(pieces.size() * 2);
    for (const Span& piece : pieces) {
      matches.clear();
      parts.clear();
      const std::string_view text(buf.data() + piece.begin, piece.end - piece.begin);
      regex_.find_all(text, matches);
      size_t prev = 0;
      for (const Span& m : matches) {
        if (m.begin > prev) parts.push_back({{piece.begin + prev, piece.begin + m.begin}, invert_});
        parts.push_back({{piece.begin + m.begin, piece.begin + m.end}, !invert_});
        prev = m.end;
      }
      if (prev < text.size()) parts.push_back({{piece.begin + prev, piece.end}, invert_});
      apply_behavior(parts, behavior_, out);
    }
    pieces.assign(out.begin(), out.end());
  }

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPre final : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, bool use_regex) : add_prefix_space_(add_prefix_space) {
    if (use_regex) {
      regex_split_ = make_split(Regex::pattern(kGpt2Pattern), SplitBehavior::Isolated, false);
    }
  }

  void split(std::string& buf, std::vector<Span>& pieces, size_t origin_len) const override {
    if (add_prefix_space_) {
      // HF prepends to every piece reaching this step, not only the first.
      for (Span& p : pieces) {
        if (buf[p.begin] == ' ') continue;
        const size_t len = p.end - p.begin;
        std::string text(1, ' ');
        text.append(buf, p.begin, len);
        const size_t at = buf.size();
        buf += text;
        p = {at, at + text.size()};
      }
    }
    if (regex_split_) regex_split_->split(buf, pieces, origin_len);
  }

  bool byte_level() const override { return true; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<PreTokenizer> regex_split_;
};

class SequencePre final : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void split(std::string& buf, std::vector<Span>& pieces, size_t origin_len) const override {
    for (const auto& s : steps_) s->split(buf, pieces, origin_len);
  }
  bool byte_level() const override {
    for (const auto& s : steps_)
      if (s->byte_level()) return true;
    return false;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

char32_t single_char(const nlohmann::json& spec, const char* key, const std::string& what) {
  const std::string s = json_string(spec, key, what);
  if (s.empty() || !utf8::is_valid(s) || utf8::decode(s, 0).len != s.size()) {
    throw Error("tokenizer.json: " + what + " field '" + key + "' must be one character");
  }
  return utf8::decode(s, 0).cp;
}

PrependScheme prepend_scheme(const nlohmann::json& spec, const std::string& what) {
  if (spec.contains("prepend_scheme") && !spec["prepend_scheme"].is_null()) {
    const std::string scheme = json_string(spec, "prepend_scheme", what);
    if (scheme == "always") return PrependScheme::Always;
    if (scheme == "first") return PrependScheme::First;
    if (scheme == "never") return PrependScheme::Never;
    throw Error("tokenizer.json: " + what + " prepend_scheme '" + scheme + "' is unknown");
  }
  // Older files: add_prefix_space.
  return json_bool_or(spec, "add_prefix_space", true, what) ? PrependScheme::Always
                                                            : PrependScheme::Never;
}

std::unique_ptr<PreTokenizer> parse(const nlohmann::json& spec, int depth) {
  if (spec.is_null()) return nullptr;
  if (depth > 32) throw Error("tokenizer.json: pre_tokenizer Sequence is nested too deeply");
  const std::string type = json_string(spec, "type", "pre_tokenizer");
  const std::string what = type + " pre_tokenizer";
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const auto& s : json_array(spec, "pretokenizers", "pre_tokenizer Sequence")) {
      if (auto p = parse(s, depth + 1)) steps.push_back(std::move(p));
    }
    return make_sequence(std::move(steps));
  }
  if (type == "Split") {
    const auto& pattern = json_object(spec, "pattern", "Split pre_tokenizer");
    const SplitBehavior behavior = parse_behavior(json_string(spec, "behavior", "Split"));
    const bool invert = json_bool_or(spec, "invert", false, "Split pre_tokenizer");
    if (pattern.contains("Regex")) {
      return make_split(Regex::pattern(json_string(pattern, "Regex", "Split pattern")), behavior,
                        invert);
    }
    if (pattern.contains("String")) {
      return make_split(Regex::literal(json_string(pattern, "String", "Split pattern")), behavior,
                        invert);
    }
    throw Error("tokenizer.json: Split pattern needs a 'Regex' or a 'String'");
  }
  if (type == "ByteLevel") {
    return make_byte_level(json_bool_or(spec, "add_prefix_space", true, "ByteLevel"),
                           json_bool_or(spec, "use_regex", true, "ByteLevel"));
  }
  if (type == "Digits") {
    return make_digits(json_bool_or(spec, "individual_digits", false, "Digits"));
  }
  if (type == "Whitespace") return make_whitespace();
  if (type == "WhitespaceSplit") return make_whitespace_split();
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "Punctuation") {
    const auto it = spec.find("behavior");
    return make_punctuation(it == spec.end() || it->is_null()
                                ? SplitBehavior::Isolated
                                : parse_behavior(json_string(spec, "behavior", what)));
  }
  if (type == "CharDelimiterSplit")
    return make_char_delimiter(single_char(spec, "delimiter", what));
  if (type == "Metaspace") {
    return make_metaspace(single_char(spec, "replacement", what), prepend_scheme(spec, what),
                          json_bool_or(spec, "split", true, what));
  }
  throw Error("tokenizer.json: pre_tokenizer type '" + type + "' is not supported yet");
}

}  // namespace

std::unique_ptr<PreTokenizer> make_split(Regex regex, SplitBehavior behavior, bool invert) {
  return std::make_unique<SplitPre>(std::move(regex), behavior, invert);
}

std::unique_ptr<PreTokenizer> make_byte_level(bool add_prefix_space, bool use_regex) {
  return std::make_unique<ByteLevelPre>(add_prefix_space, use_regex);
}

std::unique_ptr<PreTokenizer> make_digits(bool individual_digits) {
  // HF Digits splits on char::is_numeric, i.e. general category N.
  return make_split(Regex::pattern(individual_digits ? "\\p{N}" : "\\p{N}+"),
                    SplitBehavior::Isolated, false);
}

std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  return std::make_unique<SequencePre>(std::move(steps));
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& spec) {
  return parse(spec, 0);
}

}  // namespace heron::tokenizer
