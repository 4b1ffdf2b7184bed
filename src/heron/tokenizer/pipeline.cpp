#include "heron/tokenizer/pipeline.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/byte_level.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

const std::string& Tokenizer::chat_template() const {
  static const std::string none;
  const auto it = chat_templates_.find("default");
  return it == chat_templates_.end() ? none : it->second;
}

PipelineTokenizer::PipelineTokenizer(PipelineParts parts)
    : normalizer_(std::move(parts.normalizer)),
      pre_tokenizer_(std::move(parts.pre_tokenizer)),
      model_(std::move(parts.model)),
      affixes_(std::move(parts.affixes)),
      decoder_(std::move(parts.decoder)) {
  if (!model_) throw Error("tokenizer: no model");
  bos_id_ = parts.bos_id;
  eos_id_ = parts.eos_id;
  chat_templates_ = std::move(parts.chat_templates);
  spell_pieces_ = pre_tokenizer_ && pre_tokenizer_->byte_level() && !model_->byte_level();

  int32_t limit = model_->id_limit();
  for (const AddedToken& t : parts.added) {
    if (t.id < 0 || t.id >= kMaxTokenId) {
      throw Error("tokenizer: added token '" + t.content + "' has an id out of range");
    }
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

  added_ = AddedVocabulary(std::move(parts.added), normalizer_.get());
  tokens_.assign(static_cast<size_t>(limit), nullptr);
  special_.assign(static_cast<size_t>(limit), 0);
  for (int32_t id = 0; id < model_->id_limit(); ++id) tokens_[id] = model_->id_to_token(id);
  // An added token's content wins over the model's token of the same id, as in HF.
  for (const AddedToken& t : added_.tokens()) {
    tokens_[t.id] = &t.content;
    special_[t.id] = t.special ? 1 : 0;
  }
}

std::vector<int32_t> PipelineTokenizer::encode(std::string_view text, bool add_special,
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
  std::string spelled;
  for (size_t k = 0; k < segments.size(); ++k) {
    Segment& seg = segments[k];
    if (seg.id >= 0) {
      ids.push_back(seg.id);
      continue;
    }
    if (seg.text.empty()) continue;
    pieces.assign(1, Span{0, seg.text.size()});
    if (pre_tokenizer_) pre_tokenizer_->split(seg.text, pieces, seg.origin_len);
    for (const Span& p : pieces) {
      std::string_view piece = std::string_view(seg.text).substr(p.begin, p.end - p.begin);
      if (spell_pieces_) {
        spelled = byte_level::spell(piece);
        piece = spelled;
      }
      model_->tokenize(piece, ids);
    }
  }

  if (add_special) ids.insert(ids.end(), affixes_.suffix.begin(), affixes_.suffix.end());
  return ids;
}

std::string PipelineTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::vector<std::string_view> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size() || tokens_[id] == nullptr) continue;
    if (skip_special && special_[id]) continue;
    tokens.push_back(*tokens_[id]);
  }
  return decoder_.decode(tokens);
}

std::string PipelineTokenizer::token_bytes(int32_t id) const {
  const std::string* token = id_to_token(id);
  return token == nullptr ? std::string() : decoder_.token_text(*token);
}

const std::string* PipelineTokenizer::id_to_token(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return nullptr;
  return tokens_[id];
}

std::optional<int32_t> PipelineTokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_.token_to_id(token)) return id;
  return model_->token_to_id(token);
}

bool PipelineTokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && special_[id] != 0;
}

}  // namespace heron::tokenizer
