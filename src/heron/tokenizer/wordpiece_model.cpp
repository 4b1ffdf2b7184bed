#include "heron/tokenizer/wordpiece_model.h"

#include <algorithm>

#include "heron/core/error.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

WordPieceModel::WordPieceModel(Vocab vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  id_to_token_ = invert_vocab(vocab_);
  has_token_.assign(id_to_token_.size(), 0);
  for (const auto& [tok, id] : vocab_) {
    has_token_[id] = 1;
    max_token_len_ = std::max(max_token_len_, tok.size());
  }
  if (const auto it = vocab_.find(options_.unk_token); it != vocab_.end()) unk_id_ = it->second;
}

int32_t WordPieceModel::unk() const {
  if (!unk_id_) {
    throw Error("tokenizer: WordPiece unk_token '" + options_.unk_token + "' is not in the vocab");
  }
  return *unk_id_;
}

void WordPieceModel::tokenize(std::string_view piece, std::vector<int32_t>& out) const {
  size_t chars = 0;
  for (char c : piece) chars += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  if (chars > options_.max_input_chars_per_word) {
    out.push_back(unk());
    return;
  }
  const std::string& prefix = options_.continuing_subword_prefix;
  const size_t first = out.size();
  std::string key;
  for (size_t start = 0; start < piece.size();) {
    const size_t affix = start > 0 ? prefix.size() : 0;
    // Longer candidates than the longest token cannot match: start below that, on a
    // character boundary (HF tries them all, with the same result).
    size_t end = piece.size();
    if (max_token_len_ < affix) {
      end = start;
    } else if (end - start > max_token_len_ - affix) {
      end = start + (max_token_len_ - affix);
      while (end > start && (static_cast<uint8_t>(piece[end]) & 0xC0) == 0x80) --end;
    }
    int32_t found = -1;
    while (end > start) {
      key.clear();
      if (start > 0) key += prefix;
      key.append(piece, start, end - start);
      if (const auto it = vocab_.find(key); it != vocab_.end()) {
        found = it->second;
        break;
      }
      do {
        --end;
      } while (end > start && (static_cast<uint8_t>(piece[end]) & 0xC0) == 0x80);
    }
    if (found < 0) {
      out.resize(first);
      out.push_back(unk());
      return;
    }
    out.push_back(found);
    start = end;
  }
}

std::optional<int32_t> WordPieceModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* WordPieceModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= id_limit() || !has_token_[id]) return nullptr;
  return &id_to_token_[id];
}

}  // namespace heron::tokenizer
