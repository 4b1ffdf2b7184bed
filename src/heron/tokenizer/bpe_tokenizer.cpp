#include "heron/tokenizer/bpe_tokenizer.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

BpeTokenizer::BpeTokenizer(BpeParts parts)
    : normalizer_(std::move(parts.normalizer)),
      pre_tokenizer_(std::move(parts.pre_tokenizer)),
      model_(std::move(parts.model)),
      affixes_(std::move(parts.affixes)) {
  bos_id_ = parts.bos_id;
  eos_id_ = parts.eos_id;
  chat_template_ = std::move(parts.chat_template);

  int32_t limit = model_->id_limit();
  for (const AddedToken& t : parts.added) {
    if (t.id < 0) throw Error("tokenizer: added token '" + t.content + "' has a negative id");
    limit = std::max(limit, t.id + 1);
  }
  const auto check_id = [&](int32_t id, const char* what) {
    if (id < 0 || id >= limit) {
      throw Error(std::string("tokenizer: ") + what + " id " + std::to_string(id) +
                  " is outside the vocabulary (size " + std::to_string(limit) + ")");
    }
  };
  for (int32_t id : affixes_.prefix) check_id(id, "post-processor");
  for (int32_t id : affixes_.suffix) check_id(id, "post-processor");
  if (bos_id_) check_id(*bos_id_, "BOS");
  if (eos_id_) check_id(*eos_id_, "EOS");

  bytes_.resize(static_cast<size_t>(limit));
  special_.assign(static_cast<size_t>(limit), 0);
  for (int32_t id = 0; id < model_->id_limit(); ++id) {
    if (const std::string* tok = model_->id_to_token(id)) bytes_[id] = parts.decoder.bytes(*tok);
  }
  // Added tokens decode through the same decoder (HF passes them to it too).
  for (const AddedToken& t : parts.added) {
    bytes_[t.id] = parts.decoder.bytes(t.content);
    special_[t.id] = t.special ? 1 : 0;
  }
  added_ = AddedVocabulary(std::move(parts.added), normalizer_.get());
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_special,
                                          bool parse_special) const {
  std::string repaired;
  if (!utf8::is_valid(text)) {
    repaired = utf8::sanitize(text);
    text = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 8);
  if (add_special) ids.insert(ids.end(), affixes_.prefix.begin(), affixes_.prefix.end());

  std::vector<Segment> segments;
  added_.extract_and_normalize(text, parse_special, normalizer_.get(), segments);
  std::vector<Span> pieces;
  for (Segment& seg : segments) {
    if (seg.id >= 0) {
      ids.push_back(seg.id);
      continue;
    }
    if (seg.text.empty()) continue;
    pieces.assign(1, Span{0, seg.text.size()});
    if (pre_tokenizer_) pre_tokenizer_->split(seg.text, pieces);
    for (const Span& p : pieces) {
      model_->tokenize(std::string_view(seg.text).substr(p.begin, p.end - p.begin), ids);
    }
  }

  if (add_special) ids.insert(ids.end(), affixes_.suffix.begin(), affixes_.suffix.end());
  return ids;
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string raw;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special && special_[id]) continue;
    raw += bytes_[id];
  }
  if (utf8::is_valid(raw)) return raw;
  return utf8::sanitize(raw);
}

std::string BpeTokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return bytes_[id];
}

std::optional<int32_t> BpeTokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_.token_to_id(token)) return id;
  return model_->token_to_id(token);
}

bool BpeTokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && special_[id] != 0;
}

}  // namespace heron::tokenizer
