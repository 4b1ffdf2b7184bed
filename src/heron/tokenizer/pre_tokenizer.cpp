#include "heron/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/json_util.h"

namespace heron::tokenizer {

const std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

namespace {

struct Part {
  Span span;
  bool match;
};

// Applies HF's SplitDelimiterBehavior to a piece already cut into match / non-match
// parts (covering the piece, in order), appending the resulting non-empty spans.
void apply_behavior(const std::vector<Part>& parts, SplitBehavior behavior,
                    std::vector<Span>& out) {
  const size_t first = out.size();
  bool prev_match = false;
  switch (behavior) {
    case SplitBehavior::Removed:
      for (const Part& p : parts)
        if (!p.match) out.push_back(p.span);
      break;
    case SplitBehavior::Isolated:
      for (const Part& p : parts) out.push_back(p.span);
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const Part& p : parts) {
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
        const Part& p = parts[i];
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
        const Part& p = parts[i];
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

class SplitPre final : public PreTokenizer {
 public:
  SplitPre(Regex regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}

  void split(std::string& buf, std::vector<Span>& pieces) const override {
    std::vector<Span> out;
    out.reserve(pieces.size() * 2);
    std::vector<Span> matches;
    std::vector<Part> parts;
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
    pieces = std::move(out);
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

  void split(std::string& buf, std::vector<Span>& pieces) const override {
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
    if (regex_split_) regex_split_->split(buf, pieces);
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
  void split(std::string& buf, std::vector<Span>& pieces) const override {
    for (const auto& s : steps_) s->split(buf, pieces);
  }
  bool byte_level() const override {
    for (const auto& s : steps_)
      if (s->byte_level()) return true;
    return false;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

SplitBehavior parse_behavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  throw Error("tokenizer.json: Split behavior '" + name + "' is unknown");
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
  if (spec.is_null()) return nullptr;
  const std::string what = "pre_tokenizer";
  const std::string type = json_string(spec, "type", what);
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const auto& s : json_array(spec, "pretokenizers", "pre_tokenizer Sequence")) {
      if (auto p = make_pre_tokenizer(s)) steps.push_back(std::move(p));
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
  throw Error("tokenizer.json: pre_tokenizer type '" + type + "' is not supported yet");
}

}  // namespace heron::tokenizer
