// Decoder: parses a tokenizer.json "decoder" into steps and runs them as a chain of
// stages (see decoder.h).
#include "heron/tokenizer/decoder.h"

#include "heron/core/error.h"
#include "heron/tokenizer/json_util.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

class StringSink final : public DecodeSink {
 public:
  void push(std::string_view text, bool, bool) override { out.append(text); }
  void finish() override {}
  std::string out;
};

class Chain final : public DecodeStream {
 public:
  explicit Chain(const std::vector<std::shared_ptr<const DecoderStep>>& steps) : steps_(steps) {
    DecodeSink* next = &sink_;
    stages_.resize(steps_.size());
    for (size_t i = steps_.size(); i-- > 0;) {
      stages_[i] = steps_[i]->stage(*next);
      next = stages_[i].get();
    }
    first_ = next;
  }
  void push(std::string_view token) override { first_->push(token, true, true); }
  void finish() override { first_->finish(); }
  std::string take() override { return std::exchange(sink_.out, std::string()); }

 private:
  std::vector<std::shared_ptr<const DecoderStep>> steps_;  // keeps what stages refer to alive
  StringSink sink_;
  std::vector<std::unique_ptr<DecodeSink>> stages_;
  DecodeSink* first_ = nullptr;
};

char32_t single_char(const nlohmann::json& spec, const char* key, const std::string& what) {
  const std::string s = json_string(spec, key, what);
  if (s.empty() || !utf8::is_valid(s) || utf8::decode(s, 0).len != s.size()) {
    throw Error("tokenizer.json: " + what + " field '" + key + "' must be one character");
  }
  return utf8::decode(s, 0).cp;
}

size_t count_or(const nlohmann::json& spec, const char* key, size_t fallback,
                const std::string& what) {
  const auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return fallback;
  if (!it->is_number_unsigned() || it->get<uint64_t>() > 1'000'000) {
    throw Error("tokenizer.json: " + what + " field '" + std::string(key) +
                "' must be a small non-negative integer");
  }
  return static_cast<size_t>(it->get<uint64_t>());
}

std::string string_or(const nlohmann::json& spec, const char* key, const std::string& fallback,
                      const std::string& what) {
  const auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return fallback;
  return json_string(spec, key, what);
}

// Metaspace's first-token rule: prepend_scheme (or the older add_prefix_space).
bool metaspace_prepends(const nlohmann::json& spec, const std::string& what) {
  if (spec.contains("prepend_scheme") && !spec["prepend_scheme"].is_null()) {
    const std::string scheme = json_string(spec, "prepend_scheme", what);
    if (scheme == "always" || scheme == "first") return true;
    if (scheme == "never") return false;
    throw Error("tokenizer.json: " + what + " prepend_scheme '" + scheme + "' is unknown");
  }
  return json_bool_or(spec, "add_prefix_space", true, what);
}

void parse(const nlohmann::json& spec, std::vector<std::shared_ptr<const DecoderStep>>& out,
           int depth) {
  if (depth > 32) throw Error("tokenizer.json: decoder Sequence is nested too deeply");
  const std::string type = json_string(spec, "type", "decoder");
  const std::string what = type + " decoder";
  if (type == "Sequence") {
    for (const auto& d : json_array(spec, "decoders", what)) parse(d, out, depth + 1);
  } else if (type == "ByteLevel") {
    out.push_back(make_byte_level_decoder());
  } else if (type == "Replace") {
    const auto& pattern = json_object(spec, "pattern", what);
    const bool regex = pattern.contains("Regex");
    if (!regex && !pattern.contains("String")) {
      throw Error("tokenizer.json: Replace decoder pattern needs a 'Regex' or a 'String'");
    }
    out.push_back(make_replace_decoder(json_string(pattern, regex ? "Regex" : "String", what),
                                       regex, json_string(spec, "content", what)));
  } else if (type == "ByteFallback") {
    out.push_back(make_byte_fallback_decoder());
  } else if (type == "Fuse") {
    out.push_back(make_fuse_decoder());
  } else if (type == "Strip") {
    out.push_back(make_strip_decoder(single_char(spec, "content", what),
                                     count_or(spec, "start", 0, what),
                                     count_or(spec, "stop", 0, what)));
  } else if (type == "Metaspace") {
    out.push_back(make_metaspace_decoder(single_char(spec, "replacement", what),
                                         metaspace_prepends(spec, what)));
  } else if (type == "WordPiece") {
    out.push_back(make_wordpiece_decoder(string_or(spec, "prefix", "##", what),
                                         json_bool_or(spec, "cleanup", true, what)));
  } else if (type == "BPEDecoder") {
    out.push_back(make_bpe_decoder(string_or(spec, "suffix", "</w>", what)));
  } else {
    throw Error("tokenizer.json: decoder type '" + type + "' is not supported yet");
  }
}

}  // namespace

Decoder Decoder::from_json(const nlohmann::json& spec) {
  Decoder d;
  if (spec.is_null()) {
    d.steps_.push_back(make_join_with_spaces_decoder());
  } else {
    parse(spec, d.steps_, 0);
    // An empty Sequence returns the tokens unchanged, which the join then concatenates.
    if (d.steps_.empty()) d.steps_.push_back(make_fuse_decoder());
  }
  return d;
}

Decoder Decoder::byte_level() {
  Decoder d;
  d.steps_.push_back(make_byte_level_decoder());
  return d;
}

Decoder Decoder::sentencepiece(bool strip_leading_space) {
  Decoder d;
  d.steps_ = {make_replace_decoder("\xE2\x96\x81", false, " "), make_byte_fallback_decoder(),
              make_fuse_decoder()};
  if (strip_leading_space) d.steps_.push_back(make_strip_decoder(U' ', 1, 0));
  return d;
}

std::unique_ptr<DecodeStream> Decoder::start() const {
  return std::make_unique<Chain>(steps_);
}

std::string Decoder::decode(const std::vector<std::string_view>& tokens) const {
  Chain chain(steps_);
  for (std::string_view t : tokens) chain.push(t);
  chain.finish();
  return chain.take();
}

std::string Decoder::token_text(std::string_view token) const {
  std::string s(token);
  for (const auto& step : steps_) step->middle(s);
  return s;
}

}  // namespace heron::tokenizer
